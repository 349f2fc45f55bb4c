"""The secure local broker: SASL_SSL with SCRAM-SHA-512, the StandardAuthorizer, and its ACLs.

Clients and brokers meet on one ``SASL_SSL`` listener: inter-broker traffic
authenticates as ``admin`` over it too, so a cluster whose brokers leave
loopback is encrypted between them with nothing to add. The KRaft controller
listener stays ``PLAINTEXT`` on loopback: KRaft controllers cannot check SCRAM
(its credentials live in the metadata they serve), and the brokers reach them
as ``User:ANONYMOUS``, hence a super user that only that loopback port ever
sees. Every other principal is refused what no ACL allows.

The ACLs (``deploy/local/README.md``, *The secure stack*, has the table):

    worker      every topic of the prefix: read, write, describe (and its configs);
                its group and transactional ids (prefixed by the group id)
    producer    write observations and candidates
    subscriber  read supersessions, in groups named ``<prefix>-subscriber…``
    server      the HTTP/MCP server: write observations and candidates; read
                supersessions, review, erasures and facts (``slotwise-reads-…`` groups)
    admin       super user: creates topics, sets ACLs, runs operator commands
"""

from __future__ import annotations

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

# confluent-kafka's admin package imports these without re-exporting them (strict mypy).
from confluent_kafka.admin._acl import AclBinding, AclOperation, AclPermissionType
from confluent_kafka.admin._resource import ResourcePatternType, ResourceType

from slotwise.streams.dev.security import PRINCIPALS, StackSecurity
from slotwise.streams.dev.services import Address, StackError
from slotwise.topics.catalogue import Catalogue
from slotwise.topics.connection import client_config

__all__ = ["acl_bindings", "apply_acls", "broker_properties", "scram_arguments"]

_SCRAM = "SCRAM-SHA-512"
_READS_GROUP = "slotwise-reads-"  # streams/read/subject_log.py names its groups so


def broker_properties(security: StackSecurity, address: Address, controller_port: int) -> str:
    """Lines appended to the plain template: a later key wins in a properties file."""
    client = f"SASL_SSL://{address}"
    login = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="admin" password="{security.kafka_passwords["admin"]}";'
    )
    lines = {
        "listeners": f"{client},CONTROLLER://{address.host}:{controller_port}",
        "advertised.listeners": client,
        "inter.broker.listener.name": "SASL_SSL",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL",
        "sasl.enabled.mechanisms": _SCRAM,
        "sasl.mechanism.inter.broker.protocol": _SCRAM,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": login,
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(security.keystore),
        "ssl.keystore.password": security.keystore_password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(security.ca),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
    }
    body = "".join(f"{key}={value}\n" for key, value in lines.items())
    return f"\n# --- slotwise stack up --secure (streams/dev/kafka_security.py)\n{body}"


def scram_arguments(security: StackSecurity) -> list[str]:
    """``kafka-storage format`` arguments that create every principal's SCRAM credential."""
    return [
        arg
        for principal in PRINCIPALS
        for arg in (
            "--add-scram",
            f"{_SCRAM}=[name={principal},password={security.kafka_passwords[principal]}]",
        )
    ]


def acl_bindings(catalogue: Catalogue, group_id: str) -> list[AclBinding]:
    """The ACLs of every principal but admin (a super user), for one deployment's names."""
    topic, group, txn = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID
    literal, prefixed = ResourcePatternType.LITERAL, ResourcePatternType.PREFIXED
    op = AclOperation
    produce = (op.WRITE, op.DESCRIBE)
    consume = (op.READ, op.DESCRIBE)
    inputs = (catalogue.observations, catalogue.candidates)
    logged = (catalogue.supersessions, catalogue.review, catalogue.erasures, catalogue.facts)
    rules: list[tuple[str, ResourceType, str, ResourcePatternType, tuple[AclOperation, ...]]] = [
        (
            "worker",
            topic,
            f"{catalogue.prefix}.",
            prefixed,
            (*produce, op.READ, op.DESCRIBE_CONFIGS),
        ),
        ("worker", group, group_id, prefixed, consume),
        ("worker", txn, group_id, prefixed, produce),
        *(("producer", topic, name, literal, produce) for name in inputs),
        ("subscriber", topic, catalogue.supersessions, literal, consume),
        ("subscriber", group, f"{catalogue.prefix}-subscriber", prefixed, consume),
        *(("server", topic, name, literal, produce) for name in inputs),
        *(("server", topic, name, literal, consume) for name in logged),
        ("server", group, _READS_GROUP, prefixed, consume),
    ]
    return [
        AclBinding(kind, name, pattern, f"User:{who}", "*", operation, AclPermissionType.ALLOW)
        for who, kind, name, pattern, operations in rules
        for operation in operations
    ]


def apply_acls(security: StackSecurity, bootstrap: str, catalogue: Catalogue, group_id: str) -> int:
    """Create the ACLs as admin (creating an existing one is a no-op); how many there are."""
    admin = AdminClient(client_config(bootstrap, security.kafka_client("admin")))
    bindings = acl_bindings(catalogue, group_id)
    for binding, future in admin.create_acls(bindings, request_timeout=15).items():
        try:
            future.result(timeout=20)
        except KafkaException as exc:
            raise StackError(f"creating the ACL {binding} failed: {exc}") from None
    return len(bindings)
