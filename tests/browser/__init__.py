"""End-to-end tests in a real browser (Chromium through Playwright) on one built site."""
