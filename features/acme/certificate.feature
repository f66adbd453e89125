@acme
Feature: A node certificate from ACME
  With an account and the node's `acme`/`acmedomainN` settings, POST
  /nodes/{node}/certificates/acme/certificate orders a certificate
  (`acmenewcert`): the emulated CA validates each domain (`standalone`:
  the node answers on port 80; DNS: the plugin's data has its API's
  fields), issues a 90-day certificate for the domains, and the task sets
  it as the node's pveproxy-ssl.pem and restarts pveproxy, which serves
  it from then on. PUT renews it (within 30 days of its end, or with
  `force`), DELETE revokes it and pveproxy serves the node's own
  certificate again. Accounts are root@pam's, hence @fake-only.

  @fake-only @destructive
  Scenario: Order, see, renew and revoke the node's certificate
    When I register the ACME account "{prefix}acct" with:
      | contact   | admin@example.com                                                  |
      | directory | https://acme-staging-v02.api.letsencrypt.org/directory             |
      | tos_url   | https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf |
    Then the task ends with "OK"
    When I call POST "/nodes/{node}/certificates/acme/certificate"
    Then PVE answers 400 "ACME domain list in node configuration is missing!"
    When I call PUT "/nodes/{node}/config"
      | acme | account={prefix}acct,domains={node}.example.com |
    Then the call succeeds
    When I start the task POST "/nodes/{node}/certificates/acme/certificate"
    Then the task ends with "OK"
    When I read the task log
    Then the log contains "The validation for {node}.example.com is pending!"
    And the log contains "Setting up webserver"
    And the log contains "Restarting pveproxy"
    When I call GET "/nodes/{node}/certificates/info"
    Then the answer has "2/filename" = "pveproxy-ssl.pem"
    And the answer has "2/subject" = "/CN={node}.example.com"
    And the answer has "2/issuer" = "/O=(STAGING) fake-pve emulated ACME CA/CN=(STAGING) Faux Fig R1"
    And the answer has "2/san/0" = "{node}.example.com"
    When I remember the answer's "2/fingerprint" as "acme"
    And I remember the answer's "1/fingerprint" as "own"
    Then the TLS listener presents the certificate "{var:acme}"
    When I call PUT "/nodes/{node}/certificates/acme/certificate"
    Then parameter "force" is rejected with "Certificate does not expire within the next 30 days, and 'force' is not set."
    When I call POST "/nodes/{node}/certificates/acme/certificate"
    Then parameter "force" is rejected with "Custom certificate exists but 'force' is not set."
    When I start the task PUT "/nodes/{node}/certificates/acme/certificate"
      | force | 1 |
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/certificates/info"
    Then the answer's "2/fingerprint" differs from "acme"
    When I start the task DELETE "/nodes/{node}/certificates/acme/certificate"
    Then the task ends with "OK"
    When I call GET "/nodes/{node}/certificates/info"
    Then the answer has no "2"
    And the TLS listener presents the certificate "{var:own}"
    When I call PUT "/nodes/{node}/config"
      | delete | acme |
    Then the call succeeds

  @fake-only @destructive
  Scenario: A DNS plugin without its API's credentials cannot validate
    When I register the ACME account "{prefix}acct" with:
      | contact   | admin@example.com                                                  |
      | directory | https://acme-staging-v02.api.letsencrypt.org/directory             |
      | tos_url   | https://letsencrypt.org/documents/LE-SA-v1.5-February-24-2025.pdf |
    Then the task ends with "OK"
    When I add the ACME plugin "{prefix}cf" with:
      | type             | dns |
      | api              | cf  |
      | validation-delay | 0   |
    Then the call succeeds
    When I call PUT "/nodes/{node}/config"
      | acme        | account={prefix}acct                              |
      | acmedomain0 | domain={node}.example.org,plugin={prefix}cf       |
    Then the call succeeds
    When I start the task POST "/nodes/{node}/certificates/acme/certificate"
    Then the task ends with an error matching "command '.*proxmox-acme setup cf {node}.example.org' failed: exit code 1"
    When I call PUT "/nodes/{node}/config"
      | delete | acme,acmedomain0 |
    Then the call succeeds
