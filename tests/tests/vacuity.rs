//! The harness cannot pass vacuously: scenarios that expect what fake-pve
//! does not answer (a wrong message, a wrong field, a wrong shape), and
//! one with an undefined step, must each be reported as failed, while the
//! steps before them pass.

use conformance::runner::{SharedBuf, run_to};
use conformance::{Options, Summary};
use cucumber::writer::Coloring;

async fn play(file: &str) -> (Summary, String) {
    let features = format!("{}/vacuity/{file}", env!("CARGO_MANIFEST_DIR"));
    let mut opts = Options::new(features);
    opts.target = Some("fake".into());
    opts.cucumber_args = vec!["conformance".into()];
    let out = SharedBuf::default();
    let summary = run_to(opts, Box::new(out.clone()), Coloring::Never)
        .await
        .expect("the runner starts");
    (summary, out.text())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_expectations_fail() {
    let (s, report) = play("wrong-expectations.feature").await;
    assert!(s.failed(), "{report}");
    assert_eq!(s.scenarios, 4, "{report}");
    assert_eq!(s.failed_scenarios, 4, "every scenario must fail:\n{report}");
    // The undefined step counts as failed, not skipped.
    assert_eq!(s.failed_steps, 4, "{report}");
    assert!(
        report.contains("Step doesn't match any function"),
        "{report}"
    );
    assert!(
        s.passed_steps >= 4,
        "the steps before the wrong ones pass:\n{report}"
    );
    // The report says what was expected and what came back.
    assert!(report.contains("authentication succeeded"), "{report}");
    assert!(report.contains("authentication failure"), "{report}");
    assert!(report.contains("7.0"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn right_expectations_pass() {
    let (s, report) = play("right-expectations.feature").await;
    assert!(!s.failed(), "{report}");
    assert_eq!((s.scenarios, s.failed_scenarios), (1, 0), "{report}");
    assert!(s.passed_steps >= 3, "{report}");
}
