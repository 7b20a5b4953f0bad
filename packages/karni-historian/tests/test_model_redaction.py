"""What is redacted before text leaves the machine."""

import pytest
from karni_historian.condense.models.redaction import MARKER, Redactor, env_file_values
from karni_historian.model import Message, TextPart, ToolPart

SECRETS = [
    "sk-ant-api03-" + "A1b2" * 10,
    "sk-proj-" + "Zz9_" * 10,
    "ghp_" + "a" * 36,
    "github_pat_" + "B" * 30,
    "glpat-" + "c" * 20,
    "xoxb-1234567890-abcdefghij",
    "sk_live_" + "d" * 24,
    "AKIAIOSFODNN7EXAMPLE",
    "AIza" + "e" * 35,
    "hf_" + "f" * 34,
    "npm_" + "g" * 36,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_provider_tokens_are_replaced(secret):
    text = f"the token is {secret} and more"
    assert Redactor()(text) == f"the token is {MARKER} and more"


def test_private_key_blocks_are_replaced_whole():
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    assert Redactor()(f"before\n{key}\nafter") == f"before\n{MARKER}\nafter"
    assert Redactor()("x -----BEGIN RSA PRIVATE KEY-----\nMIIE...") == f"x {MARKER}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def.ghi-123", f"Authorization: Bearer {MARKER}"),
        ("authorization: Basic dXNlcjpwYXNz", f"authorization: Basic {MARKER}"),
        ('"x-api-key": "k-12345678"', f'"x-api-key": "{MARKER}"'),
        ("curl -H 'Bearer abcdefghijklmnop'", f"curl -H 'Bearer {MARKER}'"),
        ("DB_PASSWORD=hunter2secret", f"DB_PASSWORD={MARKER}"),
        ('client_secret: "s3cr3t-value"', f'client_secret: "{MARKER}"'),
        ("STRIPE_API_KEY = 'abcdefgh'", f"STRIPE_API_KEY = '{MARKER}'"),
    ],
)
def test_headers_and_secret_assignments_keep_their_names(text, expected):
    assert Redactor()(text) == expected


def test_ordinary_text_is_left_alone():
    text = "We renamed total() to subtotal() in cart.py; max_tokens=8000, author: Ana."
    assert Redactor()(text) == text


def test_exact_values_are_removed_and_short_ones_ignored():
    redact = Redactor(["plain-credential-value", "abc"])
    assert redact("x plain-credential-value y abc") == f"x {MARKER} y abc"
    assert redact.with_values(["another-value"])("another-value") == MARKER


def test_env_file_values_come_from_the_files_the_agent_read():
    messages = [
        Message(
            1,
            "assistant",
            (
                ToolPart(
                    "Read",
                    {"file_path": "/p/.env.local"},
                    '     1→export API_URL="https://internal.example"\n'
                    "     2→PLAIN=hello-world # note\n",
                ),
                ToolPart("Bash", {"command": "cat prod.env"}, "TOKEN_X='q-123456'\n"),
                ToolPart("Read", {"file_path": "/p/settings.py"}, "NOT=collected-value\n"),
            ),
        ),
        Message(2, "user", (TextPart("SECRET=typed-by-user"),)),
    ]
    assert env_file_values(messages) == ["https://internal.example", "hello-world", "q-123456"]


def test_private_spans_never_leave_the_machine():
    redact = Redactor()
    text = "Fix the invoice view. <private>Client: Globex, contract 4471</private> Keep the API."
    assert redact(text) == "Fix the invoice view. [private] Keep the API."
    assert redact("Start <PRIVATE>unclosed secret plan") == "Start [private]"
