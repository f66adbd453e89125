@access
Feature: OpenID Connect logins
  An `openid` realm logs users in through an OpenID provider:
  `auth-url` answers the provider's authorization URL (with a state, a
  nonce and a PKCE challenge), the provider sends the browser back with a
  code, and `login` exchanges that code for a ticket. PVE does not say
  why a login is refused. fake-pve emulates the provider itself, below
  `/_openid`, with the accounts a scenario gives the realm.

  Scenario: auth-url and login refuse what is not an OpenID login
    When I ask for the OpenID authorization URL of realm "nosuchrealm"
    Then PVE answers 500 "authentication domain 'nosuchrealm' does not exist"
    When I ask for the OpenID authorization URL of realm "pve"
    Then PVE answers 500 "wrong realm type (pve != openid)"
    When I call POST "/access/openid/login" without credentials
      | state        | {"csrf_token":"x","realm":"nosuchrealm"} |
      | code         | made-up                                   |
      | redirect-url | https://pve.example.com:8006              |
    Then PVE answers 401 "authentication failure"

  @fake-only
  Scenario: A user signs in at the provider and is created in the realm with its groups
    Given the cluster is seeded with:
      """
      realms:
        - realm: sso
          type: openid
          options: { issuer-url: "https://fake-pve.example/_openid", client-id: pve, client-key: s3cret, autocreate: 1, groups-claim: groups, groups-autocreate: 1 }
          directory:
            users:
              alice: { password: wonderland, email: alice@example.com, firstname: Alice, lastname: Liddell }
            groups:
              devs: [alice]
      """
    When I ask for the OpenID authorization URL of realm "sso"
    Then the call succeeds
    And the OpenID authorization URL goes to the provider's "authorize"
    And the OpenID authorization URL has "client_id" = "pve"
    And the OpenID authorization URL has "redirect_uri" = "https://pve.example.com:8006"
    And the OpenID authorization URL has "scope" = "openid email profile"
    And the OpenID authorization URL has "response_type" = "code"
    And the OpenID authorization URL has "code_challenge_method" = "S256"
    When "alice" signs in at the OpenID provider with password "not-her-password"
    Then the OpenID provider answers 401
    When "alice" signs in at the OpenID provider with password "wonderland"
    Then the OpenID provider answers 303
    When I log in with the OpenID provider's answer
    Then the login is complete
    And the answer has "username" = "alice@sso"
    When I call GET "/access/users/alice@sso"
    Then the answer has "email" = "alice@example.com"
    And the answer has "firstname" = "Alice"
    And the answer has "lastname" = "Liddell"
    When I call GET "/access/groups/devs-sso"
    Then the answer has "members/0" = "alice@sso"
    When I log in with the OpenID provider's answer
    Then PVE answers 401 "authentication failure"

  @fake-only
  Scenario: Without autocreate only a user that exists logs in, named by the username claim
    Given the cluster is seeded with:
      """
      realms:
        - realm: sso
          type: openid
          options: { issuer-url: "https://fake-pve.example/_openid", client-id: pve, username-claim: email }
          directory:
            users:
              bob: { password: builder1, email: bob@example.com }
      """
    When I ask for the OpenID authorization URL of realm "sso"
    And "bob" signs in at the OpenID provider with password "builder1"
    And I log in with the OpenID provider's answer
    Then PVE answers 401 "authentication failure"
    When I call POST "/access/users"
      | userid | bob@example.com@sso |
    Then the call succeeds
    When I ask for the OpenID authorization URL of realm "sso"
    And "bob" signs in at the OpenID provider with password "builder1"
    And I log in with the OpenID provider's answer
    Then the login is complete
    And the answer has "username" = "bob@example.com@sso"
