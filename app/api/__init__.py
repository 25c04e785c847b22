"""HTTP only: parse, call a service, render. No SQL here."""
