"""What each provider's HTTP API expects, and how to read what it answers.

A dialect only translates: an OutgoingEmail into one ProviderRequest, a response into the
provider's message id or its own error text. It does no I/O and knows no API key beyond
turning it into headers, so the contract tests can check its requests against the
providers' published API descriptions without a network.

Each dialect class is also where its provider's facts are written, once: its configured
name, its public API, whether it needs an API key or a sending domain. The registry
(providers.py) lists the classes; the settings and the factory read these attributes.
"""
