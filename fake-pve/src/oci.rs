//! `/v2/...`: the OCI distribution API of the emulated container
//! registries (`model::oci`), read-only and without authentication, so
//! that any OCI client can pull what `oci-registry-pull` pulls. The
//! registry a request reaches is the one named by its `Host` header
//! (`registry.example:5000`, or `docker.io` for Docker Hub's images):
//!
//! - `GET /v2/`: the API's version check;
//! - `GET /v2/<name>/tags/list`: a repository's tags;
//! - `GET /v2/<name>/manifests/<tag or digest>`: an image's manifest;
//! - `GET /v2/<name>/blobs/<digest>`: its config or a layer.
//!
//! Failures carry the distribution API's error codes (`NAME_UNKNOWN`,
//! `MANIFEST_UNKNOWN`, `BLOB_UNKNOWN`).

use axum::extract::State as Ext;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode, Uri, header};
use serde_json::json;

use crate::model::oci::{self, MANIFEST_TYPE};
use crate::state::State;

/// The registry's routes, for paths below `/v2`.
pub fn routes(state: State) -> axum::Router {
    axum::Router::new().fallback(serve).with_state(state)
}

fn answer(
    status: StatusCode,
    content_type: &str,
    digest: Option<String>,
    body: Vec<u8>,
) -> Response {
    let mut resp = (
        status,
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (
                http::HeaderName::from_static("docker-distribution-api-version"),
                "registry/2.0".to_string(),
            ),
        ],
        body,
    )
        .into_response();
    if let Some(d) = digest.and_then(|d| http::HeaderValue::from_str(&d).ok()) {
        resp.headers_mut()
            .insert(http::HeaderName::from_static("docker-content-digest"), d);
    }
    resp
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({ "errors": [{ "code": code, "message": message, "detail": null }] });
    answer(
        status,
        "application/json",
        None,
        body.to_string().into_bytes(),
    )
}

async fn serve(Ext(state): Ext<State>, headers: HeaderMap, uri: Uri) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost")
        .to_string();
    let path = uri.path().trim_start_matches('/');
    if path.is_empty() {
        return answer(StatusCode::OK, "application/json", None, b"{}".to_vec());
    }
    let registry = state.with(|c| c.storages().volumes().oci.clone());
    if let Some(name) = path.strip_suffix("/tags/list") {
        return match registry.repo_tags(&host, name) {
            Some(tags) => {
                let body = json!({ "name": name, "tags": tags });
                answer(
                    StatusCode::OK,
                    "application/json",
                    None,
                    body.to_string().into_bytes(),
                )
            }
            None => error(
                StatusCode::NOT_FOUND,
                "NAME_UNKNOWN",
                "repository name not known to registry",
            ),
        };
    }
    if let Some((name, reference)) = path.rsplit_once("/manifests/") {
        return match registry.manifest_of(&host, name, reference) {
            Some(img) => {
                let bytes = oci::manifest(img);
                let d = oci::digest(&bytes);
                answer(StatusCode::OK, MANIFEST_TYPE, Some(d), bytes)
            }
            None if registry.repo_tags(&host, name).is_none() => error(
                StatusCode::NOT_FOUND,
                "NAME_UNKNOWN",
                "repository name not known to registry",
            ),
            None => error(
                StatusCode::NOT_FOUND,
                "MANIFEST_UNKNOWN",
                "manifest unknown",
            ),
        };
    }
    if let Some((name, digest)) = path.rsplit_once("/blobs/") {
        return match registry.blob(&host, name, digest) {
            Some(blob) => answer(
                StatusCode::OK,
                blob.media_type,
                Some(digest.to_string()),
                blob.bytes,
            ),
            None => error(
                StatusCode::NOT_FOUND,
                "BLOB_UNKNOWN",
                "blob unknown to registry",
            ),
        };
    }
    error(
        StatusCode::NOT_FOUND,
        "UNSUPPORTED",
        "The operation is unsupported.",
    )
}
