"""No secrets in memory: every stored text is screened for credentials before it is written.

The detectors are Yelp's detect-secrets (maintained, one plugin per credential format),
used as a library on the text itself: no files, no network, no verification calls. A few
formats it has no plugin for are added here in its own plugin form (RegexBasedDetector).
What a memory service must not trip on is left out: hex strings (commit ids, hashes) and
IP addresses. docs/security.md has the list and the measured detection and false-refusal
rates (bench/secrets.py).

By what each holds: the detectors (`detectors.py`), what looks like a credential and is
not (`look_alikes.py`), the encoded forms (`encodings.py`), finding and redacting
(`find.py`), and the screen every write passes (`screen.py`).
"""
