//! OCI registries (PVE 9.1 and later): a repository's tags and an image
//! pulled into a storage as a container template.

use reqwest::Method;

use super::seg;
use super::storage::Storage;
use super::tasks::{TaskStatus, Upid};
use crate::error::Result;
use crate::transport::Params;

impl Storage<'_> {
    /// `GET /nodes/{node}/query-oci-repo-tags` (`query_oci_repo_tags`):
    /// the tags of a repository (`[host/]path`, Docker Hub without a
    /// host).
    ///
    /// # Errors
    /// PVE's message when skopeo fails: `command 'skopeo list-tags
    /// docker://REF' failed: exit code 1`.
    pub async fn query_oci_repo_tags(&self, node: &str, reference: &str) -> Result<Vec<String>> {
        let path = format!("/nodes/{}/query-oci-repo-tags", seg(node));
        let params = Params::new().set("reference", reference);
        self.client.call(Method::GET, &path, &params).await
    }

    /// `POST /nodes/{node}/storage/{storage}/oci-registry-pull`
    /// (`oci_registry_pull`): an `ociregistrypull` task writes the image
    /// as `vztmpl/<name>.tar`, the name from `filename` or the reference
    /// (normalised).
    ///
    /// # Errors
    /// `storage 'x' is not configured for content-type 'vztmpl'`, `can't
    /// upload to storage type 'x', not a file based storage!`, `refusing
    /// to override existing file 'f'`; a failed copy fails the task.
    pub async fn oci_registry_pull(
        &self,
        node: &str,
        storage: &str,
        reference: &str,
        filename: Option<&str>,
    ) -> Result<Upid> {
        let path = format!(
            "/nodes/{}/storage/{}/oci-registry-pull",
            seg(node),
            seg(storage)
        );
        let params = Params::new()
            .set("reference", reference)
            .opt("filename", filename);
        self.client.call(Method::POST, &path, &params).await
    }

    /// [`Storage::oci_registry_pull`], then waits for the task.
    ///
    /// # Errors
    /// As [`Storage::oci_registry_pull`] and
    /// [`crate::api::tasks::Tasks::wait`].
    pub async fn oci_registry_pull_and_wait(
        &self,
        node: &str,
        storage: &str,
        reference: &str,
        filename: Option<&str>,
    ) -> Result<TaskStatus> {
        let upid = self
            .oci_registry_pull(node, storage, reference, filename)
            .await?;
        self.client.tasks().wait(&upid).await
    }
}
