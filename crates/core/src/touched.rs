//! [`TrackedList`] ([`crate::Tasks`], the board's task list): a list that remembers which of its
//! items a change was handed to change.
//! A claim or a completion changes one task of thousands; a store that keeps the board's text
//! (the folder's `tasks.json`) writes the others back as they were read instead of encoding
//! them again. Nothing can be missed: a task handed out mutably by index is marked, and any
//! other mutable use of the list (an `iter_mut`, a removal, a sort) marks every task.

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A list (the tasks of a board, in order) that derefs to its `Vec`.
#[derive(Debug, Clone)]
pub struct TrackedList<T> {
    list: Vec<T>,
    touched: Touched,
}

impl<T> Default for TrackedList<T> {
    fn default() -> Self {
        TrackedList {
            list: Vec::new(),
            touched: Touched::default(),
        }
    }
}

/// Which items may differ from what was read.
#[derive(Debug, Clone)]
enum Touched {
    /// These (by index; the list only grew since it was read).
    These(Vec<usize>),
    /// Any of them.
    All,
}

impl Default for Touched {
    fn default() -> Self {
        Touched::These(Vec::new())
    }
}

impl<T> TrackedList<T> {
    /// `list` as it was read from where it is kept: no item counts as changed yet.
    pub fn as_read(list: Vec<T>) -> Self {
        TrackedList {
            list,
            touched: Touched::default(),
        }
    }

    /// Item `i`, to change; marked changed.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.mark(i);
        self.list.get_mut(i)
    }

    /// The first item for which `pred` holds, to change; only it is marked changed.
    pub fn find_mut(&mut self, pred: impl FnMut(&T) -> bool) -> Option<&mut T> {
        let i = self.list.iter().position(pred)?;
        self.get_mut(i)
    }

    /// Adds `item` at the end.
    pub fn push(&mut self, item: T) {
        self.mark(self.list.len());
        self.list.push(item);
    }

    /// Marks every item changed: a store that keeps the list's text writes it all anew.
    pub fn change_all(&mut self) {
        self.touched = Touched::All;
    }

    /// The indices of the items that may have changed since the list was read, in no
    /// particular order and possibly repeated; `None` when any may have (or the list's order).
    pub fn changed(&self) -> Option<&[usize]> {
        match &self.touched {
            Touched::These(these) => Some(these),
            Touched::All => None,
        }
    }

    fn mark(&mut self, i: usize) {
        if let Touched::These(these) = &mut self.touched {
            these.push(i);
        }
    }
}

impl<T> Deref for TrackedList<T> {
    type Target = Vec<T>;

    fn deref(&self) -> &Vec<T> {
        &self.list
    }
}

impl<T> DerefMut for TrackedList<T> {
    /// The whole list, to change as it likes: every item counts as changed.
    fn deref_mut(&mut self) -> &mut Vec<T> {
        self.touched = Touched::All;
        &mut self.list
    }
}

impl<T> From<Vec<T>> for TrackedList<T> {
    /// A list that is not as it was read: every item counts as changed.
    fn from(list: Vec<T>) -> Self {
        TrackedList {
            list,
            touched: Touched::All,
        }
    }
}

impl<T> FromIterator<T> for TrackedList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        TrackedList::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<T> IntoIterator for TrackedList<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.list.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a TrackedList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.list.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut TrackedList<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.deref_mut().iter_mut()
    }
}

impl<T: Serialize> Serialize for TrackedList<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.list.serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for TrackedList<T> {
    /// A list as it was read: nothing changed yet.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(TrackedList {
            list: Vec::deserialize(deserializer)?,
            touched: Touched::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Item {
        id: String,
        n: u32,
    }

    fn item(id: &str) -> Item {
        Item {
            id: id.into(),
            n: 1,
        }
    }

    fn read(n: usize) -> TrackedList<Item> {
        let list: Vec<Item> = (1..=n).map(|i| item(&format!("t{i}"))).collect();
        serde_json::from_value(serde_json::to_value(list).unwrap()).unwrap()
    }

    #[test]
    fn a_list_as_read_has_nothing_changed() {
        let items = read(3);
        assert_eq!(items.changed(), Some(&[][..]));
        assert_eq!(items.iter().filter(|t| t.id.starts_with('t')).count(), 3);
    }

    #[test]
    fn items_handed_out_or_added_are_marked_and_no_others() {
        let mut items = read(4);
        items.get_mut(1).unwrap().n = 9;
        items.find_mut(|t| t.id == "t4").unwrap().n = 9;
        items.push(item("t5"));
        let mut changed = items.changed().unwrap().to_vec();
        changed.sort();
        assert_eq!(changed, [1, 3, 4]);
    }

    #[test]
    fn any_other_change_of_the_list_marks_every_item() {
        let changes: [fn(&mut TrackedList<Item>); 4] = [
            |t| t.iter_mut().for_each(|t| t.n = 2),
            |t| drop(t.remove(0)),
            |t| t.sort_by(|a, b| b.id.cmp(&a.id)),
            |t| {
                for item in t {
                    item.n = 3;
                }
            },
        ];
        for change in changes {
            let mut items = read(3);
            change(&mut items);
            assert_eq!(items.changed(), None);
        }
        assert_eq!(TrackedList::<Item>::from(vec![]).changed(), None);
    }
}
