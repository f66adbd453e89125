//! The committed spec matches the official schema beside the repository.

use std::path::PathBuf;

fn shared() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/pve-schema");
    dir.is_dir().then_some(dir)
}

#[test]
fn committed_spec_is_fresh() {
    let Some(dir) = shared() else {
        eprintln!("committed_spec_is_fresh skipped: ../shared/pve-schema is absent");
        return;
    };
    for release in pve_schema::generate::RELEASES {
        let raw = std::fs::read_to_string(dir.join(format!("pve-{release}.json"))).expect("schema");
        let fresh = pve_schema::generate::generate(&raw, release).expect("generates");
        let committed = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("spec/pve-{release}.json")),
        )
        .expect("committed spec");
        assert!(
            fresh == committed,
            "schema/spec/pve-{release}.json is stale: run `cargo run -p xtask -- spec`"
        );
    }
}
