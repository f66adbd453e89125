//! Cloud-init: `cloudinit_pending` (`GET .../cloudinit`),
//! `cloudinit_update` (`PUT .../cloudinit`, regenerating the drive) and
//! `cloudinit_generated_config_dump` (`GET .../cloudinit/dump`), and
//! assertions on text answers.

use cucumber::{then, when};
use pve_client::{Method, Params};

use super::vm::vm_path;
use crate::world::PveWorld;

#[when(expr = "I read the cloud-init changes of VM {string}")]
async fn cloudinit_pending(w: &mut PveWorld, vm: String) {
    let path = vm_path(w, &vm, "/cloudinit");
    w.call(Method::GET, &path, Params::new()).await;
}

#[when(expr = "I regenerate the cloud-init drive of VM {string}")]
async fn cloudinit_update(w: &mut PveWorld, vm: String) {
    let path = vm_path(w, &vm, "/cloudinit");
    w.call(Method::PUT, &path, Params::new()).await;
}

#[when(expr = "I dump the cloud-init {string} data of VM {string}")]
async fn cloudinit_generated_config_dump(w: &mut PveWorld, kind: String, vm: String) {
    let path = vm_path(w, &vm, "/cloudinit/dump");
    let params = Params::new().set("type", kind.as_str());
    w.call(Method::GET, &path, params).await;
}

/// The text the last call answered (`\n` in features is a line break).
fn answer_text(w: &PveWorld) -> String {
    let o = w.last();
    assert!(o.ok(), "{o:?}");
    o.data
        .as_str()
        .unwrap_or_else(|| panic!("{}: not a text: {}", o.request, o.data))
        .to_string()
}

#[then(expr = "the text answer contains {string}")]
fn text_contains(w: &mut PveWorld, want: String) {
    let want = w.expand(&want).replace("\\n", "\n");
    let got = answer_text(w);
    assert!(got.contains(&want), "{want:?} not in {got:?}");
}

#[then(expr = "the text answer does not contain {string}")]
fn text_lacks(w: &mut PveWorld, want: String) {
    let want = w.expand(&want).replace("\\n", "\n");
    let got = answer_text(w);
    assert!(!got.contains(&want), "{want:?} in {got:?}");
}

#[then(expr = "the text answer matches {string}")]
fn text_matches(w: &mut PveWorld, pattern: String) {
    let pattern = w.expand(&pattern).replace("\\n", "\n");
    let re = regex::Regex::new(&format!("^(?s:{pattern})$")).unwrap_or_else(|e| panic!("{e}"));
    let got = answer_text(w);
    assert!(re.is_match(&got), "{got:?} does not match {pattern:?}");
}
