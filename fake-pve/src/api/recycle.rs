//! Large answers' buffers, kept for the next large answer.
//!
//! The kernel zeroes every fresh page a process touches: a listing of
//! 100,000 guests (35 MB) spent a fifth of its time having its buffer's
//! pages zeroed. An answer of at least [`LARGE`] bytes goes out in a
//! [`Recycled`] buffer that, once sent, comes back here; the next large
//! answer is written into it, on pages the process holds already. At most
//! [`KEPT`] buffers are kept, the largest, each of at most [`LARGEST`]
//! bytes: a listing of a million guests (350 MB) goes back to the
//! allocator.

use std::sync::Mutex;

use bytes::Bytes;

/// From how many bytes an answer's buffer is kept.
pub(crate) const LARGE: usize = 1 << 20;

/// How many buffers are kept at most.
pub(crate) const KEPT: usize = 2;

/// The largest buffer kept.
pub(crate) const LARGEST: usize = 64 << 20;

/// The kept buffers, empty.
static KEPT_BUFFERS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

fn kept() -> std::sync::MutexGuard<'static, Vec<Vec<u8>>> {
    KEPT_BUFFERS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A buffer for an answer of about `capacity` bytes: a kept one when the
/// answer is large and one is kept, else a new one.
pub(crate) fn buffer(capacity: usize) -> Vec<u8> {
    if capacity >= LARGE {
        let mut kept = kept();
        // The largest kept buffer: the last (they are kept in order).
        if let Some(mut b) = kept.pop() {
            drop(kept);
            b.reserve(capacity);
            return b;
        }
    }
    Vec::with_capacity(capacity)
}

/// Keeps `b` for a later answer when it is large, in place of a smaller
/// kept one when [`KEPT`] are kept already.
fn keep(mut b: Vec<u8>) {
    if !(LARGE..=LARGEST).contains(&b.capacity()) {
        return;
    }
    b.clear();
    let mut kept = kept();
    kept.push(b);
    kept.sort_unstable_by_key(Vec::capacity);
    if kept.len() > KEPT {
        // The smallest goes back to the allocator, outside the lock.
        let smallest = kept.remove(0);
        drop(kept);
        drop(smallest);
    }
}

/// An answer's bytes whose buffer is kept when the answer is dropped.
struct Recycled(Vec<u8>);

impl AsRef<[u8]> for Recycled {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Recycled {
    fn drop(&mut self) {
        keep(std::mem::take(&mut self.0));
    }
}

/// The answer's bytes: a large buffer comes back to be kept once the
/// answer is sent and dropped.
pub(crate) fn bytes(b: Vec<u8>) -> Bytes {
    if b.capacity() >= LARGE {
        Bytes::from_owner(Recycled(b))
    } else {
        Bytes::from(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// The kept buffers' capacities. The tests that keep buffers share
    /// the one store: they run one at a time under this lock.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn capacities() -> Vec<usize> {
        kept().iter().map(Vec::capacity).collect()
    }

    #[rstest]
    fn a_large_answer_s_buffer_comes_back_for_the_next() {
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept().clear();
        let mut b = buffer(LARGE + 10);
        b.extend_from_slice(b"[1,2,3]");
        let at = b.as_ptr();
        let sent = bytes(b);
        assert_eq!(&sent[..], b"[1,2,3]");
        assert!(capacities().is_empty(), "kept while it is being sent");
        let copy = sent.clone();
        drop(sent);
        assert!(capacities().is_empty(), "kept while a copy is being sent");
        drop(copy);
        assert_eq!(capacities().len(), 1);
        let again = buffer(LARGE);
        assert_eq!(again.as_ptr(), at, "the same buffer");
        assert!(again.is_empty(), "emptied");
        assert!(capacities().is_empty());
    }

    #[rstest]
    fn small_answers_are_not_kept_and_few_large_ones_are() {
        let _serial = SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept().clear();
        drop(bytes(buffer(1024)));
        assert!(capacities().is_empty());
        for n in 1..=4 {
            drop(bytes(Vec::with_capacity(n * LARGE)));
        }
        let kept = capacities();
        assert_eq!(kept.len(), KEPT, "{kept:?}");
        assert!(
            kept.iter().all(|c| *c >= 3 * LARGE),
            "the largest: {kept:?}"
        );
        // A request for more than a kept buffer holds grows it.
        let grown = buffer(10 * LARGE);
        assert!(grown.capacity() >= 10 * LARGE);
    }
}
