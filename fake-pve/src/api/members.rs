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
    /// The form of an object inside this one.
    type Object<'b>: Members
    where
        Self: 'b;

    /// Adds the member `key` (each key once): one of the model's own
    /// names, which need no escape in JSON.
    fn member<V: Serialize + ?Sized>(&mut self, key: &'static str, value: &V);

    /// Adds the member `key` whose value is an object, its members given
    /// in order by `fill`.
    fn object(&mut self, key: &'static str, fill: impl FnOnce(&mut Self::Object<'_>));
}

impl Members for Map<String, Value> {
    type Object<'b> = Self;

    fn member<V: Serialize + ?Sized>(&mut self, key: &'static str, value: &V) {
        // A value of the model's own types always serializes.
        self.insert(
            key.to_owned(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
    }

    fn object(&mut self, key: &'static str, fill: impl FnOnce(&mut Self)) {
        let mut object = Self::new();
        fill(&mut object);
        self.insert(key.to_owned(), Value::Object(object));
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

impl JsonObject<'_> {
    /// `"key":`, after a comma unless it is the first member.
    #[inline]
    fn key(&mut self, key: &'static str) {
        // The keys are the model's names, written in its source: copied
        // as they are, without looking for what to escape.
        debug_assert!(needs_no_escape(key), "a key to escape: {key:?}");
        let comma = self.out.len() > self.start;
        self.out.reserve(key.len() + 4);
        if comma {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
    }
}

impl Members for JsonObject<'_> {
    type Object<'b>
        = JsonObject<'b>
    where
        Self: 'b;

    #[inline]
    fn member<V: Serialize + ?Sized>(&mut self, key: &'static str, value: &V) {
        self.key(key);
        // Writing to a `Vec` cannot fail, and the model's types always
        // serialize.
        let _ = serde_json::to_writer(&mut *self.out, value);
    }

    fn object(&mut self, key: &'static str, fill: impl FnOnce(&mut JsonObject<'_>)) {
        self.key(key);
        let mut object = JsonObject::after(self.out, 0);
        fill(&mut object);
        object.finish();
    }
}

/// Whether JSON writes `key` as it is between its quotes.
fn needs_no_escape(key: &str) -> bool {
    key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
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
        m.member("running-machine", &true);
        m.object("ballooninfo", |b| {
            b.member("actual", &1024);
            b.object("inner", |i| i.member("last", &0));
        });
        m.object("empty", |_| {});
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
    #[case("vmid", true)]
    #[case("running-machine", true)]
    #[case("a \"key\"", false)]
    #[case("back\\slash", false)]
    #[case("new\nline", false)]
    fn a_key_is_written_as_it_is_only_without_what_json_escapes(
        #[case] key: &str,
        #[case] plain: bool,
    ) {
        assert_eq!(needs_no_escape(key), plain);
        assert_eq!(
            plain,
            serde_json::to_string(key).expect("a string") == format!("\"{key}\"")
        );
    }

    #[rstest]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "a key to escape")]
    fn a_key_to_escape_is_refused_by_the_tests() {
        let mut text = Vec::new();
        JsonObject::after(&mut text, 8).member("a \"key\"", &1);
    }

    #[rstest]
    fn an_empty_object() {
        let mut text = Vec::new();
        JsonObject::after(&mut text, 8).finish();
        assert_eq!(text, b"{}");
    }
}
