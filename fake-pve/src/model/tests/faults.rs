//! faults tests.
