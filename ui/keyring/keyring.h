// API keys of endpoints in the desktop keyring (the Secret Service: GNOME Keyring, KWallet), through
// QtKeychain (Debian qtkeychain-qt6-dev). The key of an endpoint is stored under the service
// "Verdict" and the endpoint's URL; it is never written to settings, the database, reports or
// logs. Both calls block (a local event loop, at most 15 s) and must be made on the GUI thread.
// Without a keyring service (no D-Bus session, nothing installed) they fail with QtKeychain's
// reason, never hang: the caller then offers an environment variable instead.
#pragma once

#include <QString>

#include <optional>
#include <string>

namespace verdict::ui {

bool storeEndpointKey(const QString& url, const QString& key, QString* error);
std::optional<std::string> readEndpointKey(const QString& url, QString* error);
bool deleteEndpointKey(const QString& url, QString* error);

}  // namespace verdict::ui
