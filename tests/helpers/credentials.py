"""Credentials in their real formats (made up): refused with the kind named, never stored."""

AWS_KEY = "AKIAQQQQ7XK2M9PZ4RT3"
GITHUB_TOKEN = "ghp_" + "k3J9xQ2mZ7vL1pR8tY4wN6bH0cF5dG2sA9eU"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx3v9\n-----END RSA PRIVATE KEY-----"
