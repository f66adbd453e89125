//! Where the members of an answer go, in order: into a JSON object
//! (`serde_json::Map`), or straight out as JSON text ([`JsonObject`]).
//!
//! An answer built once through [`Members`] has one definition and two
//! forms: the value the model's callers and tests read, and the text a
//! hot request sends without building the value first. Both carry the
//! same keys in the same order with the same values (serde_json's
//! `preserve_order`).

use serde::Serialize;
use serde_json::{Map, Value};

/// The members of one JSON object, given in order.
pub(crate) trait Members {
    /// Adds the member `key` (each key once).
    fn member<V: Serialize + ?Sized>(&mut self, key: &str, value: &V);
}

impl Members for Map<String, Value> {
    fn member<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) {
        // A value of the model's own types always serializes.
        self.insert(
            key.to_owned(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
    }
}

/// A JSON object written out member by member, as serde_json writes the
/// same object.
#[derive(Debug)]
pub(crate) struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    /// Where the object's members start in `out`.
    start: usize,
}

impl<'a> JsonObject<'a> {
    /// An empty object, written after what `out` holds, with room for
    /// `capacity` more bytes.
    pub fn after(out: &'a mut Vec<u8>, capacity: usize) -> Self {
        out.reserve(capacity.max(2));
        out.push(b'{');
        let start = out.len();
        Self { out, start }
    }

    /// Closes the object.
    pub fn finish(self) {
        self.out.push(b'}');
    }
}

impl Members for JsonObject<'_> {
    fn member<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) {
        if self.out.len() > self.start {
            self.out.push(b',');
        }
        // Writing to a `Vec` cannot fail, and the model's types always
        // serialize. A key that needs no escape (all of the model's) is
        // copied as it is.
        if key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            self.out.push(b'"');
            self.out.extend_from_slice(key.as_bytes());
            self.out.extend_from_slice(b"\":");
        } else {
            let _ = serde_json::to_writer(&mut self.out, key);
            self.out.push(b':');
        }
        let _ = serde_json::to_writer(&mut self.out, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn fill(m: &mut impl Members) {
        m.member("vmid", &100);
        m.member("name", "a \"quoted\" name");
        m.member("cpu", &0.0123);
        m.member("ha", &json!({"managed": 0}));
        m.member("list", &[1, 2]);
        m.member("a \"key\" with\\escapes\n", &true);
    }

    #[rstest]
    fn both_forms_write_the_same_text() {
        let mut map = Map::new();
        fill(&mut map);
        // After other text, as an answer's envelope opens before it.
        let mut text = b"{\"data\":".to_vec();
        let mut object = JsonObject::after(&mut text, 0);
        fill(&mut object);
        object.finish();
        let text = text.split_off(8);
        assert_eq!(
            String::from_utf8(text).expect("JSON is UTF-8"),
            serde_json::to_string(&Value::Object(map)).expect("a value")
        );
    }

    #[rstest]
    fn an_empty_object() {
        let mut text = Vec::new();
        JsonObject::after(&mut text, 8).finish();
        assert_eq!(text, b"{}");
    }
}
