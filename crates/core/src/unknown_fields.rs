//! Reading a record whose fields Baton does not all know, keeping the ones it does not: each
//! key is looked at once and either parsed into its field by the record's own derived parse, or
//! kept as JSON in the record's `extra` map. (serde's `#[serde(flatten)]` does the same by first
//! copying every field into an intermediate tree, which was a quarter of the cost of reading a
//! large `tasks.json`.)

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StringDeserializer};
use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

/// A record read with [`keeping_unknown`]: which keys are its fields, and its derived parse of
/// those (one that ignores other keys: its `extra` is `#[serde(flatten, skip_deserializing)]`,
/// and the derive is `#[serde(remote = "Self")]`, so the parse is an inherent function).
pub(crate) trait Sifted: Sized {
    /// Whether `key` is one of its fields (a test checks every field of its schema is).
    fn is_field(key: &str) -> bool;
    fn parse_fields<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// The record `deserializer` gives (a JSON object), and the keys that are none of its fields,
/// with their values, to be kept.
pub(crate) fn keeping_unknown<'de, D: Deserializer<'de>, T: Sifted>(
    deserializer: D,
) -> Result<(T, Map<String, Value>), D::Error> {
    deserializer.deserialize_map(Keeping(PhantomData))
}

struct Keeping<T>(PhantomData<T>);

impl<'de, T: Sifted> Visitor<'de> for Keeping<T> {
    type Value = (T, Map<String, Value>);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let mut extra = Map::new();
        let fields = FieldsOnly {
            map,
            is_field: T::is_field,
            extra: &mut extra,
        };
        let record = T::parse_fields(MapAccessDeserializer::new(fields))?;
        Ok((record, extra))
    }
}

/// A map's entries as the derived parse sees them: its fields only; the rest go to `extra`.
struct FieldsOnly<'a, A> {
    map: A,
    is_field: fn(&str) -> bool,
    extra: &'a mut Map<String, Value>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for FieldsOnly<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        while let Some(Key(key)) = self.map.next_key::<Key<'de>>()? {
            if (self.is_field)(&key) {
                return match key {
                    Cow::Borrowed(key) => seed.deserialize(BorrowedStrDeserializer::new(key)),
                    Cow::Owned(key) => seed.deserialize(StringDeserializer::new(key)),
                }
                .map(Some);
            }
            let value: Value = self.map.next_value()?;
            self.extra.insert(key.into_owned(), value);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// A key, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_string())))
            }
            fn visit_string<E>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Sifted;
    use crate::model::{Task, TaskContext};

    /// Every field a record's schema names is one `is_field` knows (a field added to the record
    /// and forgotten there would be read into `extra` and written twice).
    fn every_field_is_known<T: schemars::JsonSchema + Sifted>() {
        let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
        let fields = schema["properties"]
            .as_object()
            .expect("an object's schema");
        assert!(!fields.is_empty());
        for field in fields.keys() {
            assert!(
                T::is_field(field),
                "{field} is a field of {}",
                T::schema_name()
            );
        }
    }

    #[test]
    fn every_field_of_a_task_and_its_context_is_known() {
        every_field_is_known::<Task>();
        every_field_is_known::<TaskContext>();
    }

    #[test]
    fn unknown_fields_are_kept_once_and_known_ones_read_however_they_are_written() {
        let text = r#"{"id": "t1", "descr\u0069ption": "Parse", "status": "available",
            "owner": {"team": "core"}, "w\"eird": [1, 2],
            "context": {"files": ["a.rs"], "hints": ["", "first", "second"], "why": "legacy"}}"#;
        let task: Task = serde_json::from_str(text).unwrap();
        assert_eq!(task.description, "Parse");
        assert_eq!(task.extra.get("owner"), Some(&json!({"team": "core"})));
        assert_eq!(task.extra.get("w\"eird"), Some(&json!([1, 2])));
        assert_eq!(task.context.hints, "\nfirst\nsecond");
        assert_eq!(task.context.extra.get("why"), Some(&json!("legacy")));
        let written = serde_json::to_value(&task).unwrap();
        assert_eq!(written["owner"], json!({"team": "core"}));
        assert_eq!(written["context"]["why"], "legacy");
        let again: Task = serde_json::from_value(written.clone()).unwrap();
        assert_eq!(serde_json::to_value(&again).unwrap(), written);
        for (hints, read) in [(json!("one"), "one"), (json!(null), ""), (json!([]), "")] {
            let context: TaskContext = serde_json::from_value(json!({ "hints": hints })).unwrap();
            assert_eq!(context.hints, read);
        }
    }

    #[test]
    fn a_field_twice_or_of_the_wrong_shape_is_refused_saying_which() {
        let twice = r#"{"id": "t1", "id": "t2", "description": "d", "status": "available"}"#;
        let err = serde_json::from_str::<Task>(twice).unwrap_err().to_string();
        assert!(err.contains("duplicate field `id`"), "{err}");
        let wrong =
            r#"{"id": "t1", "description": "d", "status": "available", "priority": "high"}"#;
        let err = serde_json::from_str::<Task>(wrong).unwrap_err().to_string();
        assert!(err.contains("invalid type"), "{err}");
        let hints = r#"{"hints": 7}"#;
        let err = serde_json::from_str::<TaskContext>(hints)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("hints: a string, a list of strings, or null"),
            "{err}"
        );
        assert!(serde_json::from_str::<Task>("[1]").is_err());
    }
}
