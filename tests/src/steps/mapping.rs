//! Steps of the resource mappings (`/cluster/mapping/{pci,usb,dir}`).

use cucumber::gherkin::Step;
use cucumber::{given, when};
use reqwest::Method;

use super::table_params;
use crate::world::{Made, PveWorld};

/// Creates a mapping of `kind` (`pci`, `usb`, `dir`) from the step's
/// table (`map` once per node) and remembers it for the cleanup.
#[when(expr = "I create {word} mapping {string} with:")]
#[given(expr = "{word} mapping {string} was created with:")]
async fn create_mapping(w: &mut PveWorld, step: &Step, kind: String, id: String) {
    let id = w.expand(&id);
    w.made(Made::Mapping(kind.clone(), id.clone()));
    let mut params = table_params(w, step);
    params.push("id", id.clone());
    w.call(Method::POST, &format!("/cluster/mapping/{kind}"), params)
        .await;
}
