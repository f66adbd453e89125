//! `/cluster/sdn/prefix-lists` and `/cluster/sdn/route-maps` (PVE 9.2):
//! FRR prefix lists and route map entries, pending until
//! [`Sdn::reload`] applies them. The calls carry PVE's method names
//! (`list_prefix_lists`, `create_route_map_entry`, ...).
//!
//! ```no_run
//! # async fn f(client: &pve_client::Client) -> pve_client::error::Result<()> {
//! use pve_client::api::sdn::SdnView;
//! let sdn = client.sdn();
//! sdn.prefix_lists()
//!     .create_prefix_list("plin", &["action=permit,prefix=10.0.0.0/8,le=24"])
//!     .await?;
//! sdn.route_maps()
//!     .create_route_map_entry(
//!         "rmout",
//!         10,
//!         "permit",
//!         &[("match", "key=ip-address-prefix-list,value=plin")],
//!     )
//!     .await?;
//! let pending = sdn.prefix_lists().list_prefix_lists(SdnView::Pending, true).await?;
//! # Ok(())
//! # }
//! ```

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Sdn, SdnView};
use crate::Client;
use crate::api::seg;
use crate::error::Result;
use crate::transport::Params;

/// The prefix list calls; see [`Sdn::prefix_lists`].
#[derive(Debug, Clone, Copy)]
pub struct PrefixLists<'a> {
    client: &'a Client,
}

/// The route map calls; see [`Sdn::route_maps`].
#[derive(Debug, Clone, Copy)]
pub struct RouteMaps<'a> {
    client: &'a Client,
}

impl<'a> Sdn<'a> {
    /// The `/cluster/sdn/prefix-lists` calls (9.2 only).
    pub fn prefix_lists(&self) -> PrefixLists<'a> {
        PrefixLists {
            client: self.client,
        }
    }

    /// The `/cluster/sdn/route-maps` calls (9.2 only).
    pub fn route_maps(&self) -> RouteMaps<'a> {
        RouteMaps {
            client: self.client,
        }
    }
}

/// A prefix list. Without `verbose` a list shows only `id` (and `state`
/// in the pending view); in the pending view a new list has its values
/// under `pending` only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnPrefixList {
    /// The prefix list ID.
    #[serde(default)]
    pub id: String,
    /// Its entries as property strings
    /// (`action=permit,prefix=10.0.0.0/8,le=24,seq=5`).
    #[serde(default)]
    pub entries: Vec<String>,
    /// \[pending view\] `new`, `changed` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[pending view\] the values applying would set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Map<String, Value>>,
    /// The digest of `prefix-lists.cfg` (verbose lists, not running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// An entry of a prefix list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnPrefixListEntry {
    /// `permit` or `deny`.
    pub action: String,
    /// The prefix (CIDR).
    pub prefix: String,
    /// Matches prefixes at most this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub le: Option<u32>,
    /// Matches prefixes at least this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ge: Option<u32>,
    /// The sequence number.
    pub seq: u32,
}

/// A route map (`GET /cluster/sdn/route-maps`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnRouteMap {
    /// The route map ID.
    pub id: String,
}

/// A route map entry. In the pending view a new entry has its values
/// under `pending` only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdnRouteMapEntry {
    /// Its route map.
    #[serde(rename = "route-map-id", default)]
    pub route_map_id: String,
    /// Its order in the route map.
    #[serde(default)]
    pub order: u16,
    /// `permit` or `deny`.
    #[serde(default)]
    pub action: String,
    /// Match conditions (`key=vni,value=5000`).
    #[serde(rename = "match", default)]
    pub matches: Vec<String>,
    /// Set actions (`key=local-preference,value=+20`).
    #[serde(default)]
    pub set: Vec<String>,
    /// A route map to call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// How evaluation goes on (`key=on-match-goto,value=30`).
    #[serde(
        rename = "exit-action",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub exit_action: Option<String>,
    /// \[pending view\] `new`, `changed` or `deleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// \[pending view\] the values applying would set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Map<String, Value>>,
    /// The digest of `route-maps.cfg` (not in the running view).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// Options as `(name, value)` pairs; a name given twice is a list.
fn with(mut p: Params, opts: &[(&str, &str)]) -> Params {
    for (k, v) in opts {
        p.push(*k, *v);
    }
    p
}

fn with_delete(p: Params, delete: &[&str]) -> Params {
    if delete.is_empty() {
        p
    } else {
        p.array("delete", delete)
    }
}

fn list_path(id: &str) -> String {
    format!("/cluster/sdn/prefix-lists/{}", seg(id))
}

fn entry_path(id: &str, seq: u32) -> String {
    format!("/cluster/sdn/prefix-lists/{}/entries/{seq}", seg(id))
}

fn rm_entry_path(route_map: &str, order: u16) -> String {
    format!(
        "/cluster/sdn/route-maps/entries/{}/entry/{order}",
        seg(route_map)
    )
}

impl PrefixLists<'_> {
    async fn done(&self, method: Method, path: &str, p: &Params) -> Result<()> {
        let _: Value = self.client.call(method, path, p).await?;
        Ok(())
    }

    /// `GET /cluster/sdn/prefix-lists` (`list_prefix_lists`): the lists
    /// the caller may audit or allocate; `verbose` for their entries.
    ///
    /// # Errors
    /// As any call.
    pub async fn list_prefix_lists(&self, v: SdnView, verbose: bool) -> Result<Vec<SdnPrefixList>> {
        let p = v
            .params(Params::new())
            .opt("verbose", verbose.then_some(true));
        self.client
            .call(Method::GET, "/cluster/sdn/prefix-lists", &p)
            .await
    }

    /// `POST /cluster/sdn/prefix-lists` (PVE names it
    /// `create_prefix_list_entry` too): a list with its entries.
    ///
    /// # Errors
    /// `creating prefix list failed: ...`.
    pub async fn create_prefix_list(&self, id: &str, entries: &[&str]) -> Result<()> {
        let mut p = Params::new().set("id", id);
        if !entries.is_empty() {
            p = p.array("entries", entries);
        }
        self.done(Method::POST, "/cluster/sdn/prefix-lists", &p)
            .await
    }

    /// `GET /cluster/sdn/prefix-lists/{id}` (`get_prefix_list`).
    ///
    /// # Errors
    /// `id: <id> doesn't exist`.
    pub async fn get_prefix_list(&self, id: &str) -> Result<SdnPrefixList> {
        self.client
            .call(Method::GET, &list_path(id), &Params::new())
            .await
    }

    /// `PUT /cluster/sdn/prefix-lists/{id}` (`update_prefix_list`):
    /// `entries`, when given, replace the list's; `delete` takes
    /// `entries`.
    ///
    /// # Errors
    /// `updating prefix list failed: ...`.
    pub async fn update_prefix_list(
        &self,
        id: &str,
        entries: Option<&[&str]>,
        delete: &[&str],
        digest: Option<&str>,
    ) -> Result<()> {
        let mut p = Params::new().opt("digest", digest);
        if let Some(e) = entries {
            p = p.array("entries", e);
        }
        self.done(Method::PUT, &list_path(id), &with_delete(p, delete))
            .await
    }

    /// `DELETE /cluster/sdn/prefix-lists/{id}` (`delete_prefix_list`).
    ///
    /// # Errors
    /// `deleting prefix list failed: ...` (a fabric or route map still
    /// uses it, ...).
    pub async fn delete_prefix_list(&self, id: &str) -> Result<()> {
        self.done(Method::DELETE, &list_path(id), &Params::new())
            .await
    }

    /// `GET /cluster/sdn/prefix-lists/{id}/entries`
    /// (`get_prefix_list_entries`).
    ///
    /// # Errors
    /// `could not find prefix list with id: <id>`.
    pub async fn get_prefix_list_entries(&self, id: &str) -> Result<Vec<SdnPrefixListEntry>> {
        let path = format!("{}/entries", list_path(id));
        self.client.call(Method::GET, &path, &Params::new()).await
    }

    /// `POST /cluster/sdn/prefix-lists/{id}/entries`
    /// (`create_prefix_list_entry`): `le`, `ge`, `seq` among `opts`.
    ///
    /// # Errors
    /// `creating prefix list entry failed: ...`.
    pub async fn create_prefix_list_entry(
        &self,
        id: &str,
        action: &str,
        prefix: &str,
        opts: &[(&str, &str)],
    ) -> Result<()> {
        let path = format!("{}/entries", list_path(id));
        let p = with(
            Params::new().set("action", action).set("prefix", prefix),
            opts,
        );
        self.done(Method::POST, &path, &p).await
    }

    /// `GET /cluster/sdn/prefix-lists/{id}/entries/{url_seq}`
    /// (`get_prefix_list_entry`).
    ///
    /// # Errors
    /// `id: entry <seq> in prefix list <id> doesn't exist`.
    pub async fn get_prefix_list_entry(&self, id: &str, seq: u32) -> Result<SdnPrefixListEntry> {
        self.client
            .call(Method::GET, &entry_path(id, seq), &Params::new())
            .await
    }

    /// `PUT /cluster/sdn/prefix-lists/{id}/entries/{url_seq}`
    /// (`update_prefix_list_entry`): `delete` takes `le`, `ge`, `seq`
    /// (a new number).
    ///
    /// # Errors
    /// `updating prefix list entry failed: ...`.
    pub async fn update_prefix_list_entry(
        &self,
        id: &str,
        seq: u32,
        opts: &[(&str, &str)],
        delete: &[&str],
    ) -> Result<()> {
        let p = with_delete(with(Params::new(), opts), delete);
        self.done(Method::PUT, &entry_path(id, seq), &p).await
    }

    /// `DELETE /cluster/sdn/prefix-lists/{id}/entries/{url_seq}`
    /// (`delete_prefix_list_entry`).
    ///
    /// # Errors
    /// `deleting prefix list entry failed: ...`.
    pub async fn delete_prefix_list_entry(&self, id: &str, seq: u32) -> Result<()> {
        self.done(Method::DELETE, &entry_path(id, seq), &Params::new())
            .await
    }
}

impl RouteMaps<'_> {
    async fn done(&self, method: Method, path: &str, p: &Params) -> Result<()> {
        let _: Value = self.client.call(method, path, p).await?;
        Ok(())
    }

    /// `GET /cluster/sdn/route-maps` (`list_route_maps`): the route maps
    /// (as configured, or `running`) the caller may see.
    ///
    /// # Errors
    /// As any call.
    pub async fn list_route_maps(&self, running: bool) -> Result<Vec<SdnRouteMap>> {
        let p = Params::new().opt("running", running.then_some(true));
        self.client
            .call(Method::GET, "/cluster/sdn/route-maps", &p)
            .await
    }

    /// `GET /cluster/sdn/route-maps/entries` (`list_route_map_entries`).
    ///
    /// # Errors
    /// As any call.
    pub async fn list_route_map_entries(&self, v: SdnView) -> Result<Vec<SdnRouteMapEntry>> {
        self.client
            .call(
                Method::GET,
                "/cluster/sdn/route-maps/entries",
                &v.params(Params::new()),
            )
            .await
    }

    /// `POST /cluster/sdn/route-maps/entries` (`create_route_map_entry`):
    /// `match` and `set` (each may repeat), `call`, `exit-action` among
    /// `opts`.
    ///
    /// # Errors
    /// `creating route map entry failed: ...`.
    pub async fn create_route_map_entry(
        &self,
        route_map: &str,
        order: u16,
        action: &str,
        opts: &[(&str, &str)],
    ) -> Result<()> {
        let p = with(
            Params::new()
                .set("route-map-id", route_map)
                .set("order", u64::from(order))
                .set("action", action),
            opts,
        );
        self.done(Method::POST, "/cluster/sdn/route-maps/entries", &p)
            .await
    }

    /// `GET /cluster/sdn/route-maps/entries/{route-map-id}`
    /// (`list_route_map_entries_for_route_map`).
    ///
    /// # Errors
    /// As any call (an unknown route map has no entries).
    pub async fn list_route_map_entries_for_route_map(
        &self,
        route_map: &str,
        v: SdnView,
    ) -> Result<Vec<SdnRouteMapEntry>> {
        let path = format!("/cluster/sdn/route-maps/entries/{}", seg(route_map));
        self.client
            .call(Method::GET, &path, &v.params(Params::new()))
            .await
    }

    /// `GET /cluster/sdn/route-maps/entries/{route-map-id}/entry/{order}`
    /// (`get_route_map_entry`).
    ///
    /// # Errors
    /// `route-map-id: <id>_<order> doesn't exist`.
    pub async fn get_route_map_entry(
        &self,
        route_map: &str,
        order: u16,
    ) -> Result<SdnRouteMapEntry> {
        self.client
            .call(
                Method::GET,
                &rm_entry_path(route_map, order),
                &Params::new(),
            )
            .await
    }

    /// `PUT .../entry/{order}` (`update_route_map_entry`): `match` or
    /// `set` given replace the entry's; `delete` takes `set`, `match`,
    /// `call`, `exit-action`.
    ///
    /// # Errors
    /// `updating route map entry failed: ...`.
    pub async fn update_route_map_entry(
        &self,
        route_map: &str,
        order: u16,
        opts: &[(&str, &str)],
        delete: &[&str],
    ) -> Result<()> {
        let p = with_delete(with(Params::new(), opts), delete);
        self.done(Method::PUT, &rm_entry_path(route_map, order), &p)
            .await
    }

    /// `DELETE .../entry/{order}` (`delete_route_map_entry`).
    ///
    /// # Errors
    /// `deleting route map entry failed: ...`.
    pub async fn delete_route_map_entry(&self, route_map: &str, order: u16) -> Result<()> {
        self.done(
            Method::DELETE,
            &rm_entry_path(route_map, order),
            &Params::new(),
        )
        .await
    }
}
