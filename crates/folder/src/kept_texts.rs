//! Tasks' texts kept from the last read of `tasks.json`, each with what was read from it, to
//! be found again in the next read without reading them again ([`crate::reread`], the change
//! feed). Most changes leave every task where it was (one changed, one added at the end), so
//! the texts are matched in the file's order first, one comparison each; from the first text
//! out of place on, by hashing.

use std::collections::HashMap;
use std::iter::Peekable;
use std::ops::Range;
use std::vec::IntoIter;

/// The texts of the last read, in its order, with what was read from each.
struct KeptTexts<T> {
    in_order: Peekable<IntoIter<(Box<str>, T)>>,
    /// Those not yet found, by text, once a text was out of place.
    rest: Option<HashMap<Box<str>, T>>,
}

impl<T> KeptTexts<T> {
    fn new(kept: Vec<(Box<str>, T)>) -> Self {
        KeptTexts {
            in_order: kept.into_iter().peekable(),
            rest: None,
        }
    }

    /// The text kept equal to `text`, with what was read from it, taken out.
    fn take(&mut self, text: &str) -> Option<(Box<str>, T)> {
        if self.rest.is_none() {
            if self
                .in_order
                .peek()
                .is_some_and(|(kept, _)| **kept == *text)
            {
                return self.in_order.next();
            }
            self.rest = Some(self.in_order.by_ref().collect());
        }
        self.rest.as_mut()?.remove_entry(text)
    }
}

/// Each of `spans`' texts in `text` with what was read from it: kept from `kept` (the last
/// read's texts, in its order) when the text is one of them, else read by `read`; `None` as
/// soon as `read` answers `None`.
pub(crate) fn read_again<T>(
    kept: Vec<(Box<str>, T)>,
    text: &str,
    spans: &[Range<usize>],
    mut read: impl FnMut(&str) -> Option<T>,
) -> Option<Vec<(Box<str>, T)>> {
    let mut kept = KeptTexts::new(kept);
    let mut now = Vec::with_capacity(spans.len());
    for span in spans {
        let task = &text[span.clone()];
        now.push(match kept.take(task) {
            Some(kept) => kept,
            None => (Box::from(task), read(task)?),
        });
    }
    Some(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(texts: &[&str]) -> KeptTexts<usize> {
        KeptTexts::new(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| (Box::from(*t), i))
                .collect(),
        )
    }

    #[test]
    fn texts_are_found_in_order_and_out_of_it_each_once() {
        let mut texts = kept(&["a", "b", "c", "d"]);
        assert_eq!(texts.take("a").map(|(_, i)| i), Some(0));
        assert_eq!(texts.take("c").map(|(_, i)| i), Some(2), "out of place");
        assert_eq!(texts.take("b").map(|(_, i)| i), Some(1));
        assert_eq!(texts.take("b"), None, "taken already");
        assert_eq!(texts.take("e"), None, "never kept");
        assert_eq!(texts.take("d").map(|(_, i)| i), Some(3));
        let mut texts = kept(&["a", "a"]);
        assert!(texts.take("a").is_some() && texts.take("a").is_some());
    }
}
