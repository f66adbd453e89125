@nodes @certificates
Feature: A node's certificates
  /nodes/{node}/certificates/info lists, as PVE does on every node of a
  cluster, the cluster's CA (pve-root-ca.pem), the node's own
  certificate (pve-ssl.pem) that the CA signed, and a custom certificate
  (pveproxy-ssl.pem) when one is installed, with what the certificate
  itself says: subject, issuer, alternative names, dates, key type and
  size, fingerprint and PEM text.

  Scenario: The cluster CA and the node's certificate it signed
    When I call GET "/nodes/{node}/certificates/info"
    Then the call succeeds
    And the answer has "0/filename" = "pve-root-ca.pem"
    And the answer has "0/subject" matching "/CN=Proxmox Virtual Environment/OU=[^/]+/O=PVE Cluster Manager CA"
    And the answer has "0/public-key-type" = "rsaEncryption"
    And the answer has "0/public-key-bits" = "4096"
    And the answer has "1/filename" = "pve-ssl.pem"
    And the answer has "1/subject" matching "/OU=PVE Cluster Node/O=Proxmox Virtual Environment/CN={node}(\..+)?"
    And the answer has "1/san/2" = "localhost"
    And the answer has "1/san/4" = "{node}"
    And the answer has "1/public-key-bits" = "2048"
    And the answer has "1/pem" matching "-----BEGIN CERTIFICATE-----\n(?s:.+)-----END CERTIFICATE-----\n"
    When I remember the answer's "0/subject" as "ca"
    Then the answer has "1/issuer" = "{var:ca}"
    And the answer has "0/issuer" = "{var:ca}"

  @fake-only
  Scenario: A second node of the cluster has its own certificate from the same CA
    Given the cluster is seeded with:
      """
      cluster: lab
      nodes:
        - { name: {node} }
        - { name: pve2, ip: 10.0.0.2 }
      """
    When I call GET "/nodes/{node}/certificates/info"
    And I remember the answer's "0/subject" as "ca"
    And I remember the answer's "1/fingerprint" as "first"
    And I call GET "/nodes/pve2/certificates/info"
    Then the call succeeds
    And the answer has "0/filename" = "pve-root-ca.pem"
    And the answer has "0/subject" = "{var:ca}"
    And the answer has "1/filename" = "pve-ssl.pem"
    And the answer has "1/issuer" = "{var:ca}"
    And the answer has "1/subject" = "/OU=PVE Cluster Node/O=Proxmox Virtual Environment/CN=pve2.example.com"
    And the answer has "1/san/3" = "10.0.0.2"
    And the answer has "1/san/4" = "pve2"
    And the answer's "1/fingerprint" differs from "first"
    And the answer has no "2"
    When I remember the answer's "1/fingerprint" as "second"
    And I call GET "/nodes"
    Then the item with "node" = "pve2" has "ssl_fingerprint" = "{var:second}"
    When I call GET "/cluster/config/join"
      | node | {node} |
    Then the answer has "nodelist/1/name" = "pve2"
    And the answer has "nodelist/1/pve_fp" = "{var:second}"
