//! scenario tests.
