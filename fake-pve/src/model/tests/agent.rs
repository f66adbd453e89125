//! agent tests.
