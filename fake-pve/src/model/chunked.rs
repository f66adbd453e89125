//! A list that only grows at its end, kept in chunks of a fixed
//! capacity: what the world keeps of everything that happened (every
//! task, every journal line).
//!
//! A `Vec` that grows moves all it holds to memory twice its size, and
//! the allocator takes that memory fresh from the system, which zeroes
//! it. Kept in chunks, the list never moves what it holds: a push that
//! fills a chunk starts the next one. The first chunk grows as a `Vec`
//! does, so that a short list (a node's journal of a few lines) takes no
//! more than a `Vec` would.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Items per chunk.
const CHUNK: usize = 1024;

/// An append-only list in chunks of [`CHUNK`] items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Chunked<T> {
    /// An empty list.
    pub const fn new() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }

    /// How many items it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds `item` at the end.
    pub fn push(&mut self, item: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => last.push(item),
            // A full chunk is followed by one of the whole capacity; the
            // first starts as small as a `Vec`.
            full => {
                let mut next = if full.is_some() {
                    Vec::with_capacity(CHUNK)
                } else {
                    Vec::new()
                };
                next.push(item);
                self.chunks.push(next);
            }
        }
        self.len += 1;
    }

    /// The item at `i`, counted from the oldest.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
    }

    /// The item at `i`, to change.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks.get_mut(i / CHUNK)?.get_mut(i % CHUNK)
    }

    /// The items, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + Clone {
        self.chunks.iter().flatten()
    }

    /// The items, oldest first, to change.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> {
        self.chunks.iter_mut().flatten()
    }
}

impl<T> std::ops::Index<usize> for Chunked<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T> std::ops::IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T> Extend<T> for Chunked<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for item in items {
            self.push(item);
        }
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut list = Self::new();
        list.extend(items);
        list
    }
}

impl<T> From<Vec<T>> for Chunked<T> {
    fn from(items: Vec<T>) -> Self {
        items.into_iter().collect()
    }
}

/// Written as the list it is (a saved world does not show the chunks).
impl<T: Serialize> Serialize for Chunked<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Chunked<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Across chunk boundaries, the list holds what a `Vec` would, in the
    /// same order, at the same indexes.
    #[rstest]
    #[case(0)]
    #[case(1)]
    #[case(CHUNK - 1)]
    #[case(CHUNK)]
    #[case(CHUNK + 1)]
    #[case(3 * CHUNK + 7)]
    fn it_holds_what_a_vec_would(#[case] n: usize) {
        let list: Chunked<usize> = (0..n).collect();
        let vec: Vec<usize> = (0..n).collect();
        assert_eq!(list.len(), n);
        assert_eq!(list.is_empty(), n == 0);
        assert!(list.iter().eq(vec.iter()));
        assert!(list.iter().rev().eq(vec.iter().rev()));
        for i in [0, n / 2, n.saturating_sub(1)] {
            assert_eq!(list.get(i), vec.get(i));
        }
        assert_eq!(list.get(n), None);
        let json = serde_json::to_string(&list).expect("serializes");
        assert_eq!(json, serde_json::to_string(&vec).expect("serializes"));
        let back: Chunked<usize> = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, list);
    }

    #[test]
    fn items_change_in_place_and_chunks_keep_their_places() {
        let mut list: Chunked<String> = (0..CHUNK + 2).map(|i| i.to_string()).collect();
        let first = std::ptr::from_ref(&list[0]);
        list[CHUNK].push('!');
        if let Some(s) = list.get_mut(CHUNK + 1) {
            s.push('?');
        }
        list.iter_mut().take(1).for_each(|s| s.push('.'));
        for i in 0..5 * CHUNK {
            list.push(i.to_string());
        }
        // Pushes moved nothing that was already there.
        assert!(std::ptr::eq(first, &list[0]));
        assert_eq!(list[0], "0.");
        assert_eq!(list[CHUNK], format!("{CHUNK}!"));
        assert_eq!(list[CHUNK + 1], format!("{}?", CHUNK + 1));
        assert_eq!(list.len(), 6 * CHUNK + 2);
    }

    #[test]
    fn a_short_list_takes_no_whole_chunk() {
        let list: Chunked<u64> = (0..3).collect();
        assert!(list.chunks[0].capacity() < CHUNK);
    }
}
