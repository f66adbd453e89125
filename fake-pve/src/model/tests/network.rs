//! network tests.
