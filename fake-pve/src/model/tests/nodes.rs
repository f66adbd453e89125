//! nodes tests.
