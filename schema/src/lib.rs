//! pve-schema: the Proxmox VE API as the official schema describes it,
//! every path and method with its parameters, permissions and return
//! shape, for each release, usable without HTTP by the emulator and the
//! client alike.
//!
//! The compact spec in `schema/spec/` is generated from
//! `../shared/pve-schema/` by [`generate`] (run `cargo run -p xtask --
//! spec`) and embedded here.
//!
//! # Layout
//! - [`Spec`], [`Endpoint`], [`Prop`], [`Format`]: the spec of a release,
//!   loaded once by [`spec`]; [`Spec::find`] routes a path.
//! - [`validate`]: parameter validation as PVE's JSONSchema does it, with
//!   its messages; [`formats`]: PVE's named formats; [`typetext`]: formats
//!   known only by their printed syntax.
//! - [`propstring`]: the property-string codec (`virtio,bridge=vmbr0`).
//! - [`returns`]: checks an answer against the endpoint's return shape.
//! - [`openapi`]: an OpenAPI 3 document of a release.
//! - [`generate`]: the generator of the compact spec.

pub mod formats;
pub use formats::FormatError;
pub mod generate;
pub mod openapi;
pub mod propstring;
pub use propstring::PropStringError;
pub mod registered;
pub mod returns;
mod sysdata;
pub mod typetext;
pub mod validate;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A PVE release whose schema is embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Release {
    /// PVE 8.4.
    V8_4,
    /// PVE 9.1.
    V9_1,
    /// PVE 9.2.
    V9_2,
}

/// The spec of one release.
#[derive(Debug, Deserialize)]
pub struct Spec {
    /// `8.4`, `9.1` or `9.2`.
    pub release: String,
    /// Every endpoint, sorted by path and method.
    pub endpoints: Vec<Endpoint>,
    /// Endpoint indexes by method and number of path segments, and then
    /// by their last segment: its literal text, or `None` for a
    /// placeholder.
    #[serde(skip)]
    by_shape: Map<(Method, usize), Shape>,
    /// Endpoint indexes by path template (each with its methods).
    #[serde(skip)]
    by_path: Map<String, Vec<usize>>,
}

type Map<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// The endpoints of one method and number of segments (see
/// [`Spec::find`]).
#[derive(Debug, Default)]
struct Shape {
    /// Those whose last segment is this literal.
    by_last: Map<String, Vec<usize>>,
    /// Those whose last segment is a placeholder (or that have none).
    open: Vec<usize>,
}

/// An HTTP method the API has, or another (which no endpoint has).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Method {
    Get,
    Post,
    Put,
    Delete,
    Other,
}

impl Method {
    fn of(m: &str) -> Self {
        match m {
            "GET" => Self::Get,
            "POST" => Self::Post,
            "PUT" => Self::Put,
            "DELETE" => Self::Delete,
            _ => Self::Other,
        }
    }
}

/// One path and method.
#[derive(Debug, Deserialize)]
pub struct Endpoint {
    /// Path template with `{placeholders}`.
    pub path: String,
    /// `GET`, `POST`, `PUT` or `DELETE`.
    pub method: String,
    /// PVE's method name (`create_vm`, `vm_start`, ...).
    pub name: String,
    /// Whether API tokens may call it.
    pub allowtoken: bool,
    /// Whether pveproxy hands it to the privileged daemon.
    pub protected: bool,
    /// The parameter naming the node the call is proxied to.
    #[serde(default)]
    pub proxyto: Option<String>,
    /// The permission check, as in the schema.
    #[serde(default)]
    pub permissions: Value,
    /// The parameters.
    pub parameters: Parameters,
    /// The shape of `data`.
    #[serde(default)]
    pub returns: Value,
    /// The static children of the path (for directory indexes).
    #[serde(default)]
    pub children: Vec<String>,
    #[serde(skip)]
    segments: Vec<Seg>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Lit(String),
    Param(String),
}

/// The parameters of an endpoint.
#[derive(Debug, Deserialize)]
pub struct Parameters {
    /// By name; indexed ones as `net[n]`.
    #[serde(default)]
    pub properties: BTreeMap<String, Prop>,
    /// Whether other parameters are allowed: false nearly everywhere;
    /// left out (other parameters allowed) by the 9.x SDN fabrics.
    #[serde(rename = "additionalProperties", default)]
    pub additional: Option<Value>,
    /// Groups that must all hold (`allOf`, 9.2's HA rules), validated as
    /// pve-common's `check_all_of` does; [`Parameters::properties`] then
    /// holds the union of their properties, for everything but
    /// validation.
    #[serde(rename = "allOf", default)]
    pub all_of: Option<Vec<Group>>,
    /// [`Parameters::always_checked`], found once.
    #[serde(skip)]
    always: std::sync::OnceLock<Vec<String>>,
}

impl Parameters {
    /// The properties validation checks whether they are given or not,
    /// in the schema's order: those that may not be left out, and those
    /// whose variants depend on another property. The others have nothing
    /// to check unless given.
    pub fn always_checked(&self) -> &[String] {
        self.always.get_or_init(|| {
            self.properties
                .iter()
                .filter(|(key, prop)| !key.ends_with("[n]") && prop.always_checked())
                .map(|(key, _)| key.clone())
                .collect()
        })
    }
}

/// One group of an `allOf` parameter list: properties of its own, or a
/// `oneOf` whose variant the type property picks (pve-common's strict
/// object-like `oneOf`); a variant is a group too, named by its
/// `instance-type`.
#[derive(Debug, Default, Deserialize)]
pub struct Group {
    /// The group's properties.
    #[serde(default)]
    pub properties: BTreeMap<String, Prop>,
    /// Whether other parameters are allowed (`0` in PVE's groups).
    #[serde(rename = "additionalProperties", default)]
    pub additional: Option<Value>,
    /// The variants, for a `oneOf` group.
    #[serde(rename = "oneOf", default)]
    pub one_of: Option<Vec<Group>>,
    /// The parameter whose value picks the variant (`type`).
    #[serde(rename = "type-property", default)]
    pub type_property: Option<String>,
    /// The schema of that parameter (its enum of types).
    #[serde(rename = "type-property-schema", default)]
    pub type_schema: Option<Prop>,
    /// The type a variant is for.
    #[serde(rename = "instance-type", default)]
    pub instance_type: Option<String>,
    /// Whether a `oneOf` group may be left out altogether.
    #[serde(default, deserialize_with = "flag")]
    pub optional: bool,
}

impl Group {
    /// Whether the group refuses parameters it does not define.
    pub fn closed(&self) -> bool {
        self.additional
            .as_ref()
            .is_some_and(|a| a.as_bool() == Some(false) || a.as_i64() == Some(0))
    }
}

/// Gives an `allOf` list's groups their formats, and the list's
/// parameters the union of their properties (the type property first,
/// then each group's and variant's in order; the first definition of a
/// name wins).
fn derive_groups(params: &mut Parameters) {
    let Some(groups) = params.all_of.as_mut() else {
        return;
    };
    let mut union = BTreeMap::new();
    for g in groups.iter_mut() {
        derive_formats(&mut g.properties);
        if let (Some(tp), Some(ts)) = (&g.type_property, &g.type_schema) {
            union.entry(tp.clone()).or_insert_with(|| ts.clone());
        }
        for (k, p) in &g.properties {
            union.entry(k.clone()).or_insert_with(|| p.clone());
        }
        for v in g.one_of.iter_mut().flatten() {
            derive_formats(&mut v.properties);
            for (k, p) in &v.properties {
                union.entry(k.clone()).or_insert_with(|| {
                    let mut p = p.clone();
                    // required by one variant only
                    p.optional = true;
                    p
                });
            }
        }
    }
    if params.properties.is_empty() {
        params.properties = union;
    }
}

/// One property of a parameter list or property string.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct Prop {
    /// `string`, `integer`, `number`, `boolean`, `array`, `object`.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// Whether it may be left out.
    #[serde(default, deserialize_with = "flag")]
    pub optional: bool,
    /// The default (informational; PVE does not fill it in).
    #[serde(default)]
    pub default: Option<Value>,
    /// Allowed values.
    #[serde(rename = "enum", default)]
    pub enumeration: Option<Vec<Value>>,
    /// Lower bound.
    #[serde(default, deserialize_with = "number")]
    pub minimum: Option<f64>,
    /// Upper bound.
    #[serde(default, deserialize_with = "number")]
    pub maximum: Option<f64>,
    /// Longest allowed string.
    #[serde(rename = "maxLength", default, deserialize_with = "count")]
    pub max_length: Option<usize>,
    /// Shortest allowed string.
    #[serde(rename = "minLength", default, deserialize_with = "count")]
    pub min_length: Option<usize>,
    /// Perl regular expression the whole value must match.
    #[serde(default)]
    pub pattern: Option<String>,
    /// A named format or a property-string description.
    #[serde(default)]
    pub format: Option<Format>,
    /// How PVE prints the value's syntax.
    #[serde(default)]
    pub typetext: Option<String>,
    /// Another property this one needs.
    #[serde(default)]
    pub requires: Option<Value>,
    /// The element schema of an array.
    #[serde(default)]
    pub items: Option<Box<Prop>>,
    /// In a property string: this key stands for another.
    #[serde(default)]
    pub alias: Option<String>,
    /// In a property string: the key that records which alias was used.
    #[serde(rename = "keyAlias", default)]
    pub key_alias: Option<String>,
    /// In a property string: the key of a value given without `key=`.
    #[serde(default, deserialize_with = "flag")]
    pub default_key: bool,
    /// For `net[n]`: how many instances exist (`net0` .. `net31`).
    #[serde(default)]
    pub max_index: Option<u32>,
    /// The variants of a value whose schema depends on another
    /// property (`type-property`), each with its `instance-types`.
    #[serde(rename = "oneOf", default)]
    pub one_of: Option<Vec<Prop>>,
    /// The property whose value picks the variant (`protocol` for the
    /// SDN fabrics).
    #[serde(rename = "type-property", default)]
    pub type_property: Option<String>,
    /// The values of the type property this schema (or variant) is for.
    #[serde(rename = "instance-types", default)]
    pub instance_types: Option<Vec<String>>,
    #[serde(skip)]
    regex: OnceLock<Option<regex::Regex>>,
    /// The validator PVE attaches to the registered format this
    /// property string was named by ([`registered::validator`]).
    #[serde(skip)]
    pub(crate) validator: Option<registered::Validator>,
}

/// A `format`: a registered name, or the keys of a property string.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Format {
    /// `pve-vmid`, `pve-configid-list`, ...
    Named(String),
    /// A property string's keys.
    Object(BTreeMap<String, Prop>),
}

fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Bool(b) => b,
        Value::Number(n) => n.as_i64().unwrap_or(0) != 0,
        Value::String(s) => s == "1",
        _ => false,
    })
}

/// A number the schema may write as text (`"minimum": "0"`).
fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    })
}

fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    Ok(number(d)?.map(|n| n as usize))
}

impl Prop {
    /// Whether validation checks it given or not: it may not be left
    /// out, or its variants depend on another property.
    pub fn always_checked(&self) -> bool {
        !self.optional || self.one_of.is_some()
    }

    /// The pattern compiled as PVE applies it: anchored at both ends.
    pub fn regex(&self) -> Option<&regex::Regex> {
        self.regex
            .get_or_init(|| {
                self.pattern
                    .as_deref()
                    .and_then(|p| regex::Regex::new(&format!("^(?:{})$", perl_to_rust(p))).ok())
            })
            .as_ref()
    }
}

/// Rewrites a Perl pattern for the `regex` crate: `(?^:...)` and
/// `(?^i:...)` groups, atomic groups, `{,n}` and `\0`.
pub fn perl_to_rust(p: &str) -> String {
    p.replace("(?^i:", "(?i:")
        .replace("(?^:", "(?:")
        .replace("(?>", "(?:")
        .replace("{,", "{0,")
        .replace("\\0", "\\x00")
}

const SPEC_8_4: &str = include_str!("../spec/pve-8.4.json");
const SPEC_9_1: &str = include_str!("../spec/pve-9.1.json");
const SPEC_9_2: &str = include_str!("../spec/pve-9.2.json");

/// Gives named property-string formats their keys: those PVE registers
/// by name get the exact definition of [`registered`] (with the validator
/// PVE attaches), `pve-qm-ide` the keys of the endpoint's `ide[n]`, and
/// names fake-pve does not know at all a format derived from their
/// `typetext` ([`typetext::derive`]).
fn derive_formats(props: &mut BTreeMap<String, Prop>) {
    let ide = props.get("ide[n]").and_then(|p| match &p.format {
        Some(Format::Object(keys)) => Some(keys.clone()),
        _ => None,
    });
    for p in props.values_mut() {
        match &mut p.format {
            Some(Format::Named(name)) if name == "pve-qm-ide" => {
                if let Some(keys) = &ide {
                    p.format = Some(Format::Object(keys.clone()));
                }
            }
            Some(Format::Named(name)) => {
                if let Some(mut keys) = registered::keys(name) {
                    p.validator = registered::validator(name);
                    derive_formats(&mut keys);
                    p.format = Some(Format::Object(keys));
                } else if !formats::known(name)
                    && let Some(derived) = p.typetext.as_deref().and_then(typetext::derive)
                {
                    p.format = Some(Format::Object(derived));
                }
            }
            Some(Format::Object(inner)) => derive_formats(inner),
            _ => {}
        }
        if let Some(item) = p.items.as_deref_mut() {
            let mut one = BTreeMap::from([(String::new(), std::mem::take(item))]);
            derive_formats(&mut one);
            *item = one.remove("").unwrap_or_default();
        }
    }
}

fn load(text: &str) -> Spec {
    let mut spec: Spec = serde_json::from_str(text).expect("the embedded spec is valid JSON");
    for e in &mut spec.endpoints {
        derive_formats(&mut e.parameters.properties);
        derive_groups(&mut e.parameters);
        e.segments = e
            .path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(
                |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(p) => Seg::Param(p.to_string()),
                    None => Seg::Lit(s.to_string()),
                },
            )
            .collect();
    }
    for (i, e) in spec.endpoints.iter().enumerate() {
        let shape = spec
            .by_shape
            .entry((Method::of(&e.method), e.segments.len()))
            .or_default();
        match e.segments.last() {
            Some(Seg::Lit(last)) => shape.by_last.entry(last.clone()).or_default().push(i),
            _ => shape.open.push(i),
        }
        spec.by_path.entry(e.path.clone()).or_default().push(i);
    }
    spec
}

/// Where the 8.4 schema's `returns` contradict what the release's own
/// code answers. pve-network's `pending_config` has made `pending` an
/// object of the changed values since SDN's pending view was added; the
/// 8.4 schema of the zone and controller lists declares it a boolean
/// (9.x declares the object).
fn errata_8_4(spec: &mut Spec) {
    for e in &mut spec.endpoints {
        if e.method == "GET"
            && matches!(
                e.path.as_str(),
                "/cluster/sdn/zones" | "/cluster/sdn/controllers"
            )
            && let Some(p) = e.returns.pointer_mut("/items/properties/pending")
        {
            *p = serde_json::json!({ "type": "object", "optional": 1 });
        }
    }
}

/// Where the 9.2 schema's `returns` contradict what the release's own
/// code answers. `GET /cluster/options` declares the datacenter options
/// with the schema `PUT` takes them in, a property string as a string;
/// the handler answers `datacenter.cfg` as parsed, each property string
/// (`tag-style`, `crs`, `location`, ...) an object of its keys.
fn errata_9_2(spec: &mut Spec) {
    for e in &mut spec.endpoints {
        if e.method != "GET" || e.path != "/cluster/options" {
            continue;
        }
        let Some(props) = e
            .returns
            .get_mut("properties")
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for p in props.values_mut() {
            let parsed = match p.get("format") {
                Some(Value::Object(_)) => true,
                Some(Value::String(f)) => registered::NAMES.contains(&f.as_str()),
                _ => false,
            };
            if parsed && let Some(o) = p.as_object_mut() {
                o.insert("type".into(), serde_json::json!(["string", "object"]));
            }
        }
    }
}

/// Where both schemas' `returns` contradict what PVE's code answers.
/// pve-storage's `get_disks` sets a disk's or partition's `mounted` only
/// when it is mounted ("only set mounted property for mounted devices",
/// 2022): a real node's list of unmounted disks has none, though the
/// schema of `disks/list` declares it required. pve-manager's USB
/// mapping list declares a required `error` list, but its handler writes
/// `errors`, and only with `check-node`.
fn errata(spec: &mut Spec) {
    for e in &mut spec.endpoints {
        if e.method == "GET"
            && e.path == "/cluster/mapping/usb"
            && let Some(p) = e.returns.pointer_mut("/items/properties/error")
            && let Some(o) = p.as_object_mut()
        {
            o.insert("optional".into(), serde_json::json!(1));
        }
        if e.method == "GET"
            && e.path == "/nodes/{node}/disks/list"
            && let Some(p) = e.returns.pointer_mut("/items/properties/mounted")
            && let Some(o) = p.as_object_mut()
        {
            o.insert("optional".into(), serde_json::json!(1));
        }
    }
}

/// The spec of a release, parsed once.
pub fn spec(release: Release) -> &'static Spec {
    static V8: OnceLock<Spec> = OnceLock::new();
    static V9: OnceLock<Spec> = OnceLock::new();
    static V9_2: OnceLock<Spec> = OnceLock::new();
    match release {
        Release::V8_4 => V8.get_or_init(|| {
            let mut spec = load(SPEC_8_4);
            errata_8_4(&mut spec);
            errata(&mut spec);
            spec
        }),
        Release::V9_1 => V9.get_or_init(|| {
            let mut spec = load(SPEC_9_1);
            errata(&mut spec);
            spec
        }),
        Release::V9_2 => V9_2.get_or_init(|| {
            let mut spec = load(SPEC_9_2);
            errata_9_2(&mut spec);
            errata(&mut spec);
            spec
        }),
    }
}

/// The endpoint a request reaches, with its path parameters.
pub struct Found<'a> {
    /// The endpoint.
    pub endpoint: &'a Endpoint,
    /// Path parameters by name.
    pub params: Vec<(String, String)>,
}

impl Spec {
    /// Finds the endpoint for `method` and the path's segments. A literal
    /// segment wins over a placeholder, as in PVE's router.
    pub fn find<S: AsRef<str>>(&self, method: &str, segs: &[S]) -> Option<Found<'_>> {
        // The rank has a bit per segment, the first segment highest, set
        // for a placeholder: the lowest rank is the most literal match.
        let mut best: Option<(u128, &Endpoint)> = None;
        let method = Method::of(method);
        if method == Method::Other {
            return None;
        }
        let shape = self.by_shape.get(&(method, segs.len()))?;
        // Most endpoints of a shape differ in their last segment
        // (`start`, `stop`, `config`...): only those with the path's own
        // or a placeholder there are compared.
        let same_last = segs
            .last()
            .and_then(|last| shape.by_last.get(last.as_ref()))
            .map_or(&[][..], Vec::as_slice);
        for &i in same_last.iter().chain(&shape.open) {
            let e = &self.endpoints[i];
            let mut rank = 0u128;
            let ok = e.segments.iter().zip(segs).all(|(want, got)| {
                rank <<= 1;
                match want {
                    Seg::Lit(l) => l == got.as_ref(),
                    Seg::Param(_) => {
                        rank |= 1;
                        true
                    }
                }
            });
            if ok && best.as_ref().is_none_or(|(r, _)| rank < *r) {
                best = Some((rank, e));
            }
        }
        let (_, endpoint) = best?;
        let params = endpoint
            .segments
            .iter()
            .zip(segs)
            .filter_map(|(s, v)| match s {
                Seg::Param(p) => Some((p.clone(), v.as_ref().to_owned())),
                Seg::Lit(_) => None,
            })
            .collect();
        Some(Found { endpoint, params })
    }

    /// The endpoint with this exact path template and method.
    pub fn endpoint(&self, method: &str, path: &str) -> Option<&Endpoint> {
        self.by_path
            .get(path)?
            .iter()
            .map(|&i| &self.endpoints[i])
            .find(|e| e.method == method)
    }
}

impl Endpoint {
    /// Whether the schema says this call answers a list.
    pub fn returns_list(&self) -> bool {
        self.returns.get("type").and_then(Value::as_str) == Some("array")
    }

    /// The key of a directory index's items (`name`, `subdir`, ...), from
    /// the `links` of its return schema.
    pub fn index_key(&self) -> Option<String> {
        let href = self.returns.get("links")?.get(0)?.get("href")?.as_str()?;
        let key = href.strip_prefix('{')?.strip_suffix('}')?;
        Some(key.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_release_loads_with_its_endpoint_count() {
        assert_eq!(spec(Release::V8_4).endpoints.len(), 605);
        assert_eq!(spec(Release::V9_1).endpoints.len(), 649);
        assert_eq!(spec(Release::V9_1).release, "9.1");
        assert_eq!(spec(Release::V9_2).endpoints.len(), 680);
        assert_eq!(spec(Release::V9_2).release, "9.2");
    }

    /// A list of unmounted disks, as a real node sends it, fits; a
    /// `mounted` of the wrong type still does not.
    #[test]
    fn disks_may_come_without_mounted() {
        for release in [Release::V8_4, Release::V9_1, Release::V9_2] {
            let e = spec(release)
                .endpoint("GET", "/nodes/{node}/disks/list")
                .expect("disks/list");
            let disk = serde_json::json!([{
                "devpath": "/dev/sdb", "gpt": 0, "osdid": -1, "osdid-list": null,
                "size": 17179869184_u64,
            }]);
            assert!(returns::check(&e.returns, &disk).is_empty());
            let wrong = serde_json::json!([{
                "devpath": "/dev/sdb", "gpt": 0, "osdid": -1, "osdid-list": null,
                "size": 17179869184_u64, "mounted": "yes",
            }]);
            assert_eq!(returns::check(&e.returns, &wrong).len(), 1);
        }
    }

    /// 9.2's datacenter options come back parsed, as 9.1's do: a property
    /// string is an object of its keys, a plain option still a string.
    #[test]
    fn datacenter_options_may_be_parsed_property_strings() {
        let e = spec(Release::V9_2)
            .endpoint("GET", "/cluster/options")
            .expect("get_options");
        let parsed = serde_json::json!({
            "tag-style": {"shape": "dense", "ordering": "config"},
            "location": {"latitude": 48.2, "longitude": 16.37},
            "keyboard": "de",
            "allowed-tags": [],
        });
        let problems = returns::check(&e.returns, &parsed);
        assert!(problems.is_empty(), "{problems:?}");
        let wrong = serde_json::json!({"keyboard": {"layout": "de"}, "allowed-tags": []});
        assert_eq!(returns::check(&e.returns, &wrong).len(), 1);
    }

    #[test]
    fn literal_segments_win() {
        let s = spec(Release::V9_1);
        let segs = |p: &str| {
            p.split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let f = s
            .find("GET", &segs("/nodes/pve/qemu/100/status/current"))
            .expect("found");
        assert_eq!(f.endpoint.name, "vm_status");
        assert_eq!(
            f.params,
            [
                ("node".to_string(), "pve".to_string()),
                ("vmid".to_string(), "100".to_string())
            ]
        );
        assert!(s.find("GET", &segs("/nodes/pve/nothing")).is_none());
        let f = s.find("GET", &segs("/version")).expect("version");
        assert_eq!(f.endpoint.name, "version");
        assert!(s.find("PATCH", &segs("/version")).is_none());
    }

    /// Through its indexes, each endpoint is found by its own method and
    /// path, both by its template and as a request's path reaches it.
    #[rstest::rstest]
    fn every_endpoint_is_found_by_its_method_and_path(
        #[values(Release::V8_4, Release::V9_1, Release::V9_2)] release: Release,
    ) {
        let s = spec(release);
        for e in &s.endpoints {
            let by_template = s.endpoint(&e.method, &e.path).expect("by its template");
            assert!(std::ptr::eq(by_template, e), "{} {}", e.method, e.path);
            // The template's own `{placeholders}` as the request's values:
            // no literal segment of another endpoint is one.
            let segs: Vec<String> = e
                .path
                .split('/')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect();
            let found = s.find(&e.method, &segs).expect("by a path");
            assert!(std::ptr::eq(found.endpoint, e), "{} {}", e.method, e.path);
        }
        assert!(s.endpoint("PATCH", "/version").is_none());
        assert!(s.endpoint("GET", "/no/such/path").is_none());
    }

    /// Every named format of the raw spec text, nested ones included.
    fn named_formats(v: &Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(f)) = m.get("format") {
                    out.insert(f.clone());
                }
                m.values().for_each(|x| named_formats(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| named_formats(x, out)),
            _ => {}
        }
    }

    #[test]
    fn every_named_format_is_validated_or_accepted_on_purpose() {
        let mut names = std::collections::BTreeSet::new();
        for text in [SPEC_8_4, SPEC_9_1, SPEC_9_2] {
            let v: Value = serde_json::from_str(text).expect("json");
            for e in v["endpoints"].as_array().expect("endpoints") {
                named_formats(&e["parameters"], &mut names);
            }
        }
        assert!(names.len() > 100, "{names:?}");
        let missing: Vec<&String> = names
            .iter()
            .filter(|n| !formats::known(n) && !formats::ACCEPTED_AS_IS.iter().any(|(a, _)| a == n))
            .collect();
        assert!(missing.is_empty(), "silently unvalidated: {missing:?}");
        for (name, why) in formats::ACCEPTED_AS_IS {
            assert!(!why.is_empty() && !formats::known(name), "{name}");
        }
    }

    #[test]
    fn registered_formats_replace_the_typetext() {
        let s = spec(Release::V9_1);
        let ep = s.endpoint("POST", "/nodes/{node}/qemu").expect("create_vm");
        let keys = |p: &str| match &ep.parameters.properties[p].format {
            Some(Format::Object(k)) => k.keys().cloned().collect::<Vec<_>>(),
            other => panic!("{p}: {other:?}"),
        };
        assert_eq!(keys("boot"), ["legacy", "order"]);
        assert!(keys("cdrom").contains(&"file".to_string()));
        assert!(keys("cpu").contains(&"reported-model".to_string()));
        assert!(ep.parameters.properties["cpu"].validator.is_some());
        // a simple validator stays a name
        assert!(matches!(
            &ep.parameters.properties["startup"].format,
            Some(Format::Named(n)) if n == "pve-startup-order"
        ));
    }

    #[test]
    fn perl_patterns_translate() {
        let p = Prop {
            pattern: Some("(?^:[A-Za-z][A-Za-z0-9\\.\\-_]+)".into()),
            ..Prop::default()
        };
        let re = p.regex().expect("compiles");
        assert!(re.is_match("ci-token"));
        assert!(!re.is_match("1ci"));
        assert!(!re.is_match("ci token"));
        let p = Prop {
            pattern: Some("[A-Za-z0-9\\-_\\s]{,8}".into()),
            ..Prop::default()
        };
        assert!(p.regex().expect("compiles").is_match("ab cd"));
        assert!(!p.regex().expect("compiles").is_match("abcdefghi"));
    }
}
