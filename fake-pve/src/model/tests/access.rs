//! access tests.
