"""Every dialect's requests, held against the provider's own published API description.

The descriptions live in ``shared/providers`` beside the repository (see its README); CI
clones them there. For each provider and a few messages (one recipient, several, names
and subjects beyond ASCII, the 50-recipient maximum) the request must use the operation's
path and method, carry the auth and header parameters it declares, and have a body that
validates against its schema and uses no field the schema does not declare. The stand-in's
answers are held against the response schemas too, and the dialect must read them.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from email.utils import getaddresses
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jsonschema
import pytest
import yaml
from referencing import Registry, Specification
from referencing.jsonschema import DRAFT4, DRAFT202012

from leadmail.adapters.mail.dialects.base import MAX_PROVIDER_TEXT, Dialect, ProviderRequest
from leadmail.adapters.mail.providers import dialect_for
from leadmail.domain.email import MAX_RECIPIENTS, Mailbox, OutgoingEmail
from leadmail.domain.unsubscribe import unsubscribe_headers
from tests.postgres import in_ci
from tests.support.standin import PROVIDERS, Provider, RecordedRequest, accepted, refused

SPECS_DIR = (Path(__file__).parents[2] / ".." / "shared" / "providers").resolve()
SPEC_FILES: dict[Provider, str] = {
    "resend": "resend-openapi.yaml",
    "postmark": "postmark-server-swagger.yml",
    "sendgrid": "sendgrid-mail-v3-openapi.yaml",
    "mailgun": "mailgun-openapi.yaml",
    "mailpit": "mailpit-swagger.json",
}
MAILGUN_DOMAIN = "mg.school.example"
API_KEY = "key-0123456789abcdef"
MESSAGE_ID = "msg_Q2xhc3NpY2FsLW11c2lj"


# The published descriptions, and schemas addressed in them by JSON pointer.


@dataclass(frozen=True)
class Spec:
    provider: Provider
    document: dict[str, Any]
    registry: Registry[Any]
    swagger2: bool

    @property
    def uri(self) -> str:
        return f"urn:leadmail-test:{self.provider}"

    def at(self, pointer: str) -> Any:
        node: Any = self.document
        for token in pointer.split("/")[1:]:
            key = token.replace("~1", "/").replace("~0", "~")
            node = node[int(key)] if isinstance(node, list) else node[key]
        return node

    def follow(self, pointer: str) -> str:
        """The pointer itself, or where its local ``$ref`` chain leads."""
        while isinstance(ref := self.at(pointer).get("$ref"), str) and ref.startswith("#"):
            pointer = ref[1:]
        return pointer

    def validator(self, pointer: str) -> jsonschema.protocols.Validator:
        cls = jsonschema.Draft4Validator if self.swagger2 else jsonschema.Draft202012Validator
        schema = {"$ref": f"{self.uri}#{quote(pointer, safe='/~')}"}
        return cls(schema, registry=self.registry, format_checker=cls.FORMAT_CHECKER)

    def operation(self, path: str, method: str) -> tuple[str, dict[str, str]]:
        """The pointer of the operation whose path template matches ``path``, and the
        template's parameters' values."""
        for template, item in self.document["paths"].items():
            pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
            match = re.fullmatch(pattern, path)
            if match and method.lower() in item:
                return f"/paths/{_escape(template)}/{method.lower()}", match.groupdict()
        raise AssertionError(f"{self.provider}: no {method} {path} in the description")

    def body_schema(self, operation: str) -> tuple[str, str]:
        """(media type, pointer of the request body schema) of an operation."""
        op = self.at(operation)
        if self.swagger2:
            index = next(i for i, p in enumerate(op["parameters"]) if p["in"] == "body")
            consumes = op.get("consumes") or self.document.get("consumes") or []
            assert "application/json" in consumes
            return "application/json", f"{operation}/parameters/{index}/schema"
        body = self.follow(f"{operation}/requestBody")
        (media_type,) = self.at(body)["content"]
        return media_type, f"{body}/content/{_escape(media_type)}/schema"

    def header_parameters(self, operation: str) -> dict[str, tuple[bool, str]]:
        """Header name (lower case) -> (required, pointer of its schema)."""
        found: dict[str, tuple[bool, str]] = {}
        for i, _ in enumerate(self.at(operation).get("parameters", [])):
            pointer = self.follow(f"{operation}/parameters/{i}")
            param = self.at(pointer)
            if param["in"] == "header":
                schema = pointer if self.swagger2 else f"{pointer}/schema"
                found[param["name"].lower()] = (bool(param.get("required")), schema)
        return found

    def security_schemes(self, operation: str) -> list[dict[str, Any]]:
        if self.swagger2:
            definitions = self.document.get("securityDefinitions") or {}
            requirements = self.at(operation).get("security", self.document.get("security", []))
        else:
            definitions = self.document["components"].get("securitySchemes") or {}
            requirements = self.at(operation).get("security", self.document.get("security", []))
        return [definitions[name] for requirement in requirements for name in requirement]

    def response_schema(self, operation: str, status: int) -> str | None:
        """Pointer of the JSON schema of a documented response, None if it has no body
        or is not documented."""
        responses = self.at(f"{operation}/responses")
        if str(status) not in responses:
            return None
        response = self.follow(f"{operation}/responses/{status}")
        if self.swagger2:
            return f"{response}/schema" if "schema" in self.at(response) else None
        content = self.at(response).get("content", {})
        return f"{response}/content/application~1json/schema" if content else None


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def json_keys(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(key): json_keys(value) for key, value in node.items()}
    if isinstance(node, list):
        return [json_keys(value) for value in node]
    return node


@cache
def load_spec(provider: Provider) -> Spec:
    path = SPECS_DIR / SPEC_FILES[provider]
    text = path.read_text(encoding="utf-8")
    # As JSON: YAML reads unquoted status codes (200:) as integers.
    document = json_keys(json.loads(text) if path.suffix == ".json" else yaml.safe_load(text))
    swagger2 = document.get("swagger") == "2.0"
    if not swagger2:
        assert str(document["openapi"]).startswith("3.1")
    specification: Specification[Any] = DRAFT4 if swagger2 else DRAFT202012
    uri = f"urn:leadmail-test:{provider}"
    registry: Registry[Any] = Registry().with_resource(uri, specification.create_resource(document))
    return Spec(provider, document, registry, swagger2)


@pytest.fixture(scope="module", autouse=True)
def _descriptions_present() -> None:
    missing = [name for name in SPEC_FILES.values() if not (SPECS_DIR / name).is_file()]
    if missing:
        message = f"the providers' API descriptions are missing from {SPECS_DIR}: {missing}"
        if in_ci():
            pytest.fail(f"{message}; in CI that is a failure", pytrace=False)
        pytest.skip(message)


# The messages.


def box(raw: str) -> Mailbox:
    return Mailbox.parse(raw)


UNSUBSCRIBE_HEADERS = unsubscribe_headers("https://mail.school.example/u/abc.def")


MESSAGES: dict[str, OutgoingEmail] = {
    "one recipient": OutgoingEmail(
        sender=box("news@school.example"),
        to=(box("ada@example.com"),),
        subject="Your course starts on Monday",
        html="<p>Hello!</p>",
    ),
    "several named": OutgoingEmail(
        sender=box("Course Team <team@school.example>"),
        to=(
            box("Ada Lovelace <ada@example.com>"),
            box("Lovelace, Ada <ada.l@example.org>"),
            box("grace@example.net"),
        ),
        subject="Week 2: loops",
        html='<h1>Week 2</h1><p><a href="https://school.example/w2">Start</a></p>',
    ),
    "non-ascii": OutgoingEmail(
        sender=box("Zoë Ångström <zoe@school.example>"),
        to=(box("李雷 <li@example.cn>"), box("Jürgen Groß <juergen@example.de>")),
        subject="Grüße aus Köln — 你好 🎉",
        html="<p>Schöne Grüße, 李雷! ✓</p>",
    ),
    "with a reply-to": OutgoingEmail(
        sender=box("Course Team <team@school.example>"),
        to=(box("Ada Lovelace <ada@example.com>"),),
        subject="March open day",
        html="<p>Come and see us.</p>",
        reply_to=box("Admissions Office <admissions@school.example>"),
    ),
    "with a text part": OutgoingEmail(
        sender=box("news@school.example"),
        to=(box("Ada Lovelace <ada@example.com>"),),
        subject="Spring courses",
        html='<p>New courses: <a href="https://school.example/spring">see them</a></p>',
        text="New courses: see them (https://school.example/spring)",
    ),
    "with unsubscribe headers": OutgoingEmail(
        sender=box("news@school.example"),
        to=(box("Ada Lovelace <ada@example.com>"),),
        subject="Spring courses",
        html='<p><a href="https://mail.school.example/u/abc.def">Unsubscribe</a></p>',
        headers=UNSUBSCRIBE_HEADERS,
    ),
    "fifty recipients": OutgoingEmail(
        sender=box("news@school.example"),
        to=tuple(box(f"Lead {i} <lead{i}@example.com>") for i in range(MAX_RECIPIENTS)),
        subject="Last call",
        html="<p>Doors close tonight.</p>",
    ),
}


def dialect(provider: Provider) -> Dialect:
    return dialect_for(provider, domain=MAILGUN_DOMAIN)


def api_key_for(provider: Provider) -> str:
    return f"lead:{API_KEY}" if provider == "mailpit" else API_KEY


CASES = [
    pytest.param(provider, email, id=f"{provider}-{label}")
    for provider in PROVIDERS
    for label, email in MESSAGES.items()
]


def form_instance(spec: Spec, schema: str, form: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """Form fields as the JSON instance the schema describes: a field whose schema is an
    array holds every value sent under its name; any other field must be sent once."""
    properties = spec.at(spec.follow(schema))["properties"]
    instance: dict[str, Any] = {}
    for name, value in form:
        if properties.get(name, {}).get("type") == "array":
            instance.setdefault(name, []).append(value)
        else:
            assert name not in instance, f"{name} sent twice"
            instance[name] = value
    return instance


def undeclared(spec: Spec, instance: Any, pointer: str, where: str = "body") -> list[str]:
    """Fields in ``instance`` that its schema (at ``pointer``) does not declare."""
    node = spec.at(spec.follow(pointer))
    found: list[str] = []
    if isinstance(instance, dict) and "properties" in node:
        for key, value in instance.items():
            if key not in node["properties"]:
                found.append(f"{where}.{key}")
            else:
                inner = f"{spec.follow(pointer)}/properties/{_escape(key)}"
                found += undeclared(spec, value, inner, f"{where}.{key}")
    if isinstance(instance, list) and isinstance(node.get("items"), dict):
        for i, value in enumerate(instance):
            found += undeclared(spec, value, f"{spec.follow(pointer)}/items", f"{where}[{i}]")
    return found


def body_of(spec: Spec, request: ProviderRequest, media_type: str, schema: str) -> Any:
    if media_type == "application/json":
        assert request.json is not None
        assert not request.form
        return request.json
    assert media_type == "multipart/form-data"
    assert request.json is None
    assert request.form
    return form_instance(spec, schema, request.form)


# Requests.


@pytest.mark.parametrize(("provider", "email"), CASES)
def test_the_body_validates_against_the_published_schema(
    provider: Provider, email: OutgoingEmail
) -> None:
    spec = load_spec(provider)
    request = dialect(provider).build(email, MESSAGE_ID)
    operation, _ = spec.operation(request.path, request.method)
    media_type, schema = spec.body_schema(operation)
    body = body_of(spec, request, media_type, schema)

    errors = [
        f"{list(e.absolute_path)}: {e.message}" for e in spec.validator(schema).iter_errors(body)
    ]
    assert errors == []
    # Only what the description declares (Mailgun documents its "v:" custom variables and
    # its "h:" headers by example names, "v:my-var" and "h:X-My-Header").
    extra = [f for f in undeclared(spec, body, schema) if not f.startswith(("body.v:", "body.h:"))]
    assert extra == []


@pytest.mark.parametrize(("provider", "email"), CASES)
def test_the_body_carries_the_message(provider: Provider, email: OutgoingEmail) -> None:
    request = dialect(provider).build(email, MESSAGE_ID)

    sender, recipients, subject, html = read_message(provider, request)

    assert sender == (email.sender.name, email.sender.address)
    assert recipients == [(b.name, b.address) for b in email.to]
    assert subject == email.subject
    assert html == email.html


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_reply_to_is_the_described_field(provider: Provider) -> None:
    email = MESSAGES["with a reply-to"]
    request = dialect(provider).build(email, MESSAGE_ID)

    assert read_reply_to(provider, request) == [("Admissions Office", "admissions@school.example")]
    without = dialect(provider).build(MESSAGES["one recipient"], MESSAGE_ID)
    assert read_reply_to(provider, without) == []
    if provider == "mailgun":  # a header, as the description's "h:X-My-Header" says
        assert "h:X-My-Header" in (SPECS_DIR / SPEC_FILES["mailgun"]).read_text()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_headers_go_in_the_described_field(provider: Provider) -> None:
    spec = load_spec(provider)
    email = MESSAGES["with unsubscribe headers"]
    request = dialect(provider).build(email, MESSAGE_ID)
    operation, _ = spec.operation(request.path, request.method)
    _, schema = spec.body_schema(operation)
    properties = spec.at(spec.follow(schema))["properties"]

    assert read_headers(provider, request) == list(UNSUBSCRIBE_HEADERS)
    assert UNSUBSCRIBE_HEADERS == (
        ("List-Unsubscribe", "<https://mail.school.example/u/abc.def>"),
        ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
    )
    described = {
        "resend": "headers",
        "postmark": "Headers",
        "sendgrid": "headers",
        "mailgun": "h:X-My-Header",  # "h:" and the header's name, by the example's pattern
        "mailpit": "Headers",
    }[provider]
    assert described in properties
    assert "header" in properties[described].get("description", "").lower() or (
        provider == "postmark"  # a HeaderCollection of MessageHeader, described there
        and spec.at(spec.follow(f"{spec.follow(schema)}/properties/Headers"))["items"]
    )
    # No headers: no field at all (nothing built for a send that carries none).
    without = dialect(provider).build(MESSAGES["one recipient"], MESSAGE_ID)
    assert read_headers(provider, without) == []
    if provider == "mailgun":
        assert not [name for name, _ in without.form if name.startswith("h:")]
    else:
        assert without.json is not None
        assert not {"headers", "Headers"} & set(without.json)


def read_headers(provider: Provider, request: ProviderRequest) -> list[tuple[str, str]]:
    """The extra mail headers as the provider reads them from the body."""
    body = request.json or {}
    match provider:
        case "resend" | "sendgrid":
            return list(body.get("headers", {}).items())
        case "postmark":
            return [(h["Name"], h["Value"]) for h in body.get("Headers", [])]
        case "mailgun":
            return [
                (name.removeprefix("h:"), value)
                for name, value in request.form
                if name.startswith("h:") and name != "h:Reply-To"
            ]
        case "mailpit":
            return list(body.get("Headers", {}).items())


def read_reply_to(provider: Provider, request: ProviderRequest) -> list[tuple[str, str]]:
    """The reply-to addresses as the provider reads them from the body."""
    body = request.json or {}
    match provider:
        case "resend":
            return getaddresses([body["reply_to"]]) if "reply_to" in body else []
        case "postmark":
            return getaddresses([body["ReplyTo"]]) if "ReplyTo" in body else []
        case "sendgrid":
            found = body.get("reply_to")
            return [] if found is None else [(found.get("name", ""), found["email"])]
        case "mailgun":
            return getaddresses([v for k, v in request.form if k == "h:Reply-To"])
        case "mailpit":
            return [(p.get("Name", ""), p["Email"]) for p in body.get("ReplyTo", [])]


def read_message(
    provider: Provider, request: ProviderRequest
) -> tuple[tuple[str, str], list[tuple[str, str]], str, str]:
    """(sender, recipients, subject, html) as the provider reads them from the body."""
    body = request.json or {}
    fields: dict[str, list[str]] = {}
    for name, value in request.form:
        fields.setdefault(name, []).append(value)
    match provider:
        case "resend":
            return _one(body["from"]), getaddresses(body["to"]), body["subject"], body["html"]
        case "postmark":
            to = getaddresses([body["To"]])
            return _one(body["From"]), to, body["Subject"], body["HtmlBody"]
        case "sendgrid":
            (envelope,) = body["personalizations"]
            to = [(p.get("name", ""), p["email"]) for p in envelope["to"]]
            sender = (body["from"].get("name", ""), body["from"]["email"])
            # The HTML last: a text/plain part, when there is one, comes first.
            *_, content = body["content"]
            assert content["type"] == "text/html"
            return sender, to, body["subject"], content["value"]
        case "mailgun":
            ((raw_sender,), (subject,), (html,)) = fields["from"], fields["subject"], fields["html"]
            return _one(raw_sender), getaddresses(fields["to"]), subject, html
        case "mailpit":
            to = [(p.get("Name", ""), p["Email"]) for p in body["To"]]
            sender = (body["From"].get("Name", ""), body["From"]["Email"])
            return sender, to, body["Subject"], body["HTML"]


def _one(raw: str) -> tuple[str, str]:
    (pair,) = getaddresses([raw])
    return pair


@pytest.mark.parametrize("provider", PROVIDERS)
def test_path_and_method_are_the_described_operation(provider: Provider) -> None:
    spec = load_spec(provider)
    request = dialect(provider).build(MESSAGES["one recipient"], MESSAGE_ID)

    _, parameters = spec.operation(request.path, request.method)

    assert request.method == "POST"
    expected: tuple[str, dict[str, str]] = {
        "resend": ("/emails", {}),
        "postmark": ("/email", {}),
        "sendgrid": ("/v3/mail/send", {}),
        "mailgun": (f"/v3/{MAILGUN_DOMAIN}/messages", {"domain_name": MAILGUN_DOMAIN}),
        "mailpit": ("/api/v1/send", {}),
    }[provider]
    assert (request.path, parameters) == expected


@pytest.mark.parametrize("provider", PROVIDERS)
def test_auth_is_the_described_scheme(provider: Provider) -> None:
    spec = load_spec(provider)
    subject = dialect(provider)
    request = subject.build(MESSAGES["one recipient"], MESSAGE_ID)
    operation, _ = spec.operation(request.path, request.method)
    key = api_key_for(provider)
    auth = subject.auth_headers(key)

    schemes = spec.security_schemes(operation)
    for scheme in schemes:
        assert scheme["type"] == "http"
        credentials = auth["Authorization"]
        if scheme["scheme"] == "bearer":
            assert credentials == f"Bearer {key}"
        else:
            assert scheme["scheme"] == "basic"
            kind, _, token = credentials.partition(" ")
            assert kind == "Basic"
            # Mailgun: user "api", the key as password (the scheme's own description)
            assert base64.b64decode(token).decode() == f"api:{key}"
            assert "api:" in scheme["description"]
    if provider == "postmark":
        # Swagger 2.0 without securityDefinitions: the token is a required header parameter
        assert schemes == []
        assert auth == {"X-Postmark-Server-Token": key}
    if provider == "mailpit":
        # No auth in the description; a Mailpit behind --api-auth-file takes basic auth.
        assert schemes == []
        assert subject.auth_headers("") == {}
        assert auth == {"Authorization": "Basic " + base64.b64encode(key.encode()).decode()}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_required_header_parameter_is_sent_and_valid(provider: Provider) -> None:
    spec = load_spec(provider)
    subject = dialect(provider)
    request = subject.build(MESSAGES["several named"], MESSAGE_ID)
    operation, _ = spec.operation(request.path, request.method)
    auth = subject.auth_headers(api_key_for(provider))
    sent = {k.lower(): v for k, v in {**request.headers, **auth}.items()}

    for name, (required, schema) in spec.header_parameters(operation).items():
        if required:
            assert name in sent, f"{name} is required by the description"
        if name in sent:
            assert list(spec.validator(schema).iter_errors(sent[name])) == []


def test_resend_gets_our_message_id_as_its_idempotency_key() -> None:
    spec = load_spec("resend")
    request = dialect("resend").build(MESSAGES["one recipient"], MESSAGE_ID)
    operation, _ = spec.operation(request.path, request.method)

    assert request.headers["Idempotency-Key"] == MESSAGE_ID
    assert "idempotency-key" in spec.header_parameters(operation)


@pytest.mark.parametrize(
    ("provider", "carried"),
    [
        ("sendgrid", lambda r: r.json["personalizations"][0]["custom_args"]["leadmail_message_id"]),
        ("mailgun", lambda r: dict(r.form)["v:leadmail_message_id"]),
    ],
)
def test_our_message_id_travels_with_the_message(provider: Provider, carried: Any) -> None:
    request = dialect(provider).build(MESSAGES["one recipient"], MESSAGE_ID)

    assert carried(request) == MESSAGE_ID


def test_postmark_recipients_are_one_comma_separated_string() -> None:
    request = dialect("postmark").build(MESSAGES["several named"], MESSAGE_ID)

    assert request.json is not None
    assert request.json["To"] == (
        '"Ada Lovelace" <ada@example.com>, "Lovelace, Ada" <ada.l@example.org>, grace@example.net'
    )
    assert request.headers["Accept"] == "application/json"


def test_mailgun_sends_one_to_field_per_recipient() -> None:
    request = dialect("mailgun").build(MESSAGES["several named"], MESSAGE_ID)

    assert [value for name, value in request.form if name == "to"] == [
        '"Ada Lovelace" <ada@example.com>',
        '"Lovelace, Ada" <ada.l@example.org>',
        "grace@example.net",
    ]


# Answers: the stand-in's must match the response schemas, and the dialect must read them.


def recorded(provider: Provider, email: OutgoingEmail) -> RecordedRequest:
    request = dialect(provider).build(email, MESSAGE_ID)
    body = json.dumps(request.json).encode() if request.json is not None else b""
    return RecordedRequest("POST", request.path, (), body, provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_accepted_answer_matches_the_description_and_yields_the_id(provider: Provider) -> None:
    spec = load_spec(provider)
    request = recorded(provider, MESSAGES["several named"])
    operation, _ = spec.operation(request.path, "POST")
    answer = accepted(provider, request)

    documented = {
        int(code) for code in spec.at(operation)["responses"] if str(code).startswith("2")
    }
    assert answer.status in documented
    schema = spec.response_schema(operation, answer.status)
    if schema is None:
        assert answer.body == b""  # SendGrid: 202 without a body, the id in a header
    else:
        assert list(spec.validator(schema).iter_errors(json.loads(answer.body))) == []
    headers = dict(answer.headers)

    assert answer.provider_id
    assert dialect(provider).message_id_from(answer.status, headers, answer.body) == (
        answer.provider_id
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_documented_error_answer_matches_the_description_and_yields_its_text(
    provider: Provider,
) -> None:
    spec = load_spec(provider)
    request = recorded(provider, MESSAGES["one recipient"])
    operation, _ = spec.operation(request.path, "POST")
    documented = sorted(
        int(code) for code in spec.at(operation)["responses"] if 400 <= int(code) < 500
    ) or [422]  # Resend's description documents no error answers; its errors page does

    for status in documented:
        answer = refused(provider, status, "The 'to' field is invalid.")
        schema = spec.response_schema(operation, status)
        if schema is not None:
            json_body = dict(answer.headers)["Content-Type"] == "application/json"
            # Mailgun's 401 is described as a string: it is the plain text body.
            body = json.loads(answer.body) if json_body else answer.body.decode()
            assert list(spec.validator(schema).iter_errors(body)) == [], status
        text = dialect(provider).error_text(status, dict(answer.headers), answer.body)
        assert "The 'to' field is invalid." in text


def test_an_accepted_answer_without_json_yields_no_id() -> None:
    for provider in PROVIDERS:
        assert dialect(provider).message_id_from(200, {}, b"<html>OK</html>") is None


def test_error_text_is_clipped_to_500_characters() -> None:
    assert MAX_PROVIDER_TEXT == 500
    for provider in PROVIDERS:
        answer = refused(provider, 400, "x" * 2000)
        text = dialect(provider).error_text(400, dict(answer.headers), answer.body)
        assert 100 < len(text) <= MAX_PROVIDER_TEXT


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_text_part_is_the_described_field_and_absent_without_one(
    provider: Provider,
) -> None:
    text = "New courses: see them (https://school.example/spring)"
    made = dialect(provider).build(MESSAGES["with a text part"], MESSAGE_ID)
    without = dialect(provider).build(MESSAGES["one recipient"], MESSAGE_ID)

    assert text_of_request(provider, made) == [text]
    assert text_of_request(provider, without) == []


def text_of_request(provider: Provider, request: ProviderRequest) -> list[str]:
    """The plain-text parts a request carries, read where each provider's description
    puts them (SendGrid: the text/plain content, which must come first)."""
    if provider == "mailgun":
        return [value for name, value in request.form if name == "text"]
    body = request.json
    assert isinstance(body, dict)
    if provider == "sendgrid":
        content = body["content"]
        plain = [c["value"] for c in content if c["type"] == "text/plain"]
        assert not plain or content[0]["type"] == "text/plain", content
        return plain
    field = {"resend": "text", "postmark": "TextBody", "mailpit": "Text"}[provider]
    return [body[field]] if field in body else []
