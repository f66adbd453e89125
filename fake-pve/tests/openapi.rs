//! The OpenAPI document at `/_fake/openapi.json` declares each answer's
//! shape (`{"data": <returns>}`), and fake-pve's own answers fit it: every
//! GET of the schema that a lab world answers is validated against the
//! document as a schema-based fuzzer would.

mod common;

use common::{Auth, Pve, builder, control, start_with};
use fake_pve::{PveVersion, Scenario};
use reqwest::Method;
use rstest::rstest;
use serde_json::{Value, json};

const LAB: &str = "\
cluster: lab
nodes:
  - { name: pve1 }
  - { name: pve2 }
users:
  - userid: alice@pve
    password: secret12
    tokens:
      - { tokenid: ci, secret: 5b7f3c1e-8a2d-4e6f-9b1c-0d2e3f4a5b6c }
vms:
  - vmid: 100
    node: pve1
    name: web
    status: running
    config: { agent: 1, cores: 2, net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0', scsi0: 'local-lvm:vm-100-disk-0,size=8G' }
    snapshots:
      clean: { snaptime: 1790000000, description: before }
";

async fn lab(version: PveVersion) -> (Pve, Auth) {
    let s = Scenario::parse(LAB, "lab.yaml").expect("scenario");
    let pve = start_with(builder().pve_version(version).scenario(s)).await;
    let root = pve.root().await;
    (pve, root)
}

async fn document(pve: &Pve, root: &Auth) -> Value {
    let r = control(pve, root, Method::GET, "/_fake/openapi.json", None).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()
}

/// The schema of the `data` of `GET path`'s answer.
fn data_schema<'a>(doc: &'a Value, path: &str) -> &'a Value {
    &doc["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["properties"]
        ["data"]
}

/// The keywords the document uses, read as an OpenAPI 3.0 validator
/// reads them: the problems found, each as `path: what`.
fn validate(schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        if !any.iter().any(|s| {
            let mut inner = Vec::new();
            validate(s, v, at, &mut inner);
            inner.is_empty()
        }) {
            out.push(format!("{at}: none of {} fits {v}", any.len()));
        }
        return;
    }
    let Some(t) = schema.get("type").and_then(Value::as_str) else {
        return;
    };
    if v.is_null() {
        if schema["nullable"] != json!(true) {
            out.push(format!("{at}: null where {t} is not nullable"));
        }
        return;
    }
    let fits = match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        _ => false,
    };
    if !fits {
        out.push(format!("{at}: {v} is not {t}"));
        return;
    }
    if let Some(n) = v.as_f64()
        && (schema["minimum"].as_f64().is_some_and(|m| n < m)
            || schema["maximum"].as_f64().is_some_and(|m| n > m))
    {
        out.push(format!("{at}: {n} out of range"));
    }
    if let (Some(s), Some(p)) = (v.as_str(), schema["pattern"].as_str())
        && !regex::Regex::new(p).is_ok_and(|re| re.is_match(s))
    {
        out.push(format!("{at}: {s:?} does not match {p}"));
    }
    for k in schema["required"].as_array().into_iter().flatten() {
        if let Some(k) = k.as_str()
            && v.get(k).is_none()
        {
            out.push(format!("{at}.{k}: missing"));
        }
    }
    if let Some(props) = schema["properties"].as_object() {
        for (k, s) in props {
            if let Some(x) = v.get(k) {
                validate(s, x, &format!("{at}.{k}"), out);
            }
        }
    }
    if let (Some(items), Some(a)) = (schema.get("items"), v.as_array()) {
        for (i, x) in a.iter().enumerate() {
            validate(items, x, &format!("{at}[{i}]"), out);
        }
    }
}

#[tokio::test]
async fn operations_declare_their_answers_shape() {
    let (pve, root) = lab(PveVersion::V9_1).await;
    let doc = document(&pve, &root).await;
    let ok = &doc["paths"]["/version"]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(ok["required"], json!(["data"]), "{ok}");
    // corosync's values come as text: an integer may be numeric text.
    let join = data_schema(&doc, "/cluster/config/join");
    let nodeid = &join["properties"]["nodelist"]["items"]["properties"]["nodeid"];
    assert_eq!(nodeid["anyOf"][0]["type"], "integer", "{nodeid}");
    assert_eq!(nodeid["anyOf"][1]["type"], "string", "{nodeid}");
    assert_eq!(
        join["properties"]["nodelist"]["items"]["required"],
        json!(["name", "pve_addr", "pve_fp", "quorum_votes"])
    );
    let list = data_schema(&doc, "/nodes/{node}/qemu");
    assert_eq!(list["type"], "array", "{list}");
    assert_eq!(
        list["items"]["required"],
        json!(["status", "vmid"]),
        "{list}"
    );
    // A wrong shape is reported.
    let mut problems = Vec::new();
    validate(
        list,
        &json!([{"vmid": "one", "status": "running"}]),
        "data",
        &mut problems,
    );
    validate(list, &json!({"vmid": 100}), "data", &mut problems);
    assert_eq!(problems.len(), 2, "{problems:?}");
}

/// Every GET whose path this lab can fill answers a shape its declared
/// schema accepts.
#[rstest]
#[case(PveVersion::V8_4)]
#[case(PveVersion::V9_1)]
#[tokio::test]
async fn every_answer_fits_its_declared_shape(#[case] version: PveVersion) {
    let (pve, root) = lab(version).await;
    let doc = document(&pve, &root).await;
    let fill = |path: &str| -> Option<String> {
        let filled = path
            .replace("{node}", "pve1")
            .replace("{vmid}", "100")
            .replace("{storage}", "local")
            .replace("{userid}", "alice@pve")
            .replace("{tokenid}", "ci")
            .replace("{snapname}", "clean");
        (!filled.contains('{')).then_some(filled)
    };
    let mut checked = 0;
    let mut problems = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let Some(schema) = item.get("get").map(|_| data_schema(&doc, path)) else {
            continue;
        };
        let Some(filled) = fill(path) else {
            continue;
        };
        let r = pve.get(&filled, &root).await;
        if r.status != 200 {
            continue;
        }
        let body: Value = serde_json::from_str(&r.text).unwrap_or(Value::Null);
        let Some(data) = body.get("data") else {
            problems.push(format!("GET {filled}: no data member"));
            continue;
        };
        let mut found = Vec::new();
        validate(schema, data, "data", &mut found);
        problems.extend(found.into_iter().map(|p| format!("GET {filled}: {p}")));
        checked += 1;
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(checked > 150, "only {checked} answers checked");
}
