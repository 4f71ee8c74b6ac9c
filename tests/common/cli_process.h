// Test helper for the CLI tests (tests/app): runs the built `verdict` binary (VERDICT_BINARY) as a
// child process with an optional results database ($VERDICT_DB) and captures what it printed.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <map>

namespace verdict::test {

struct CliRun {
    int exitCode = -1;   // -1 when the process crashed or did not finish within the timeout
    QByteArray out, err;
    nlohmann::json json() const { return nlohmann::json::parse(out.toStdString(), nullptr, false); }
};

// `extraEnv`: more variables (e.g. XDG_CONFIG_HOME of a temporary folder, so that no user
// catalog of the machine leaks in); an empty value removes the variable.
inline CliRun runVerdict(const QStringList& args, const QString& db = {}, int timeoutMs = 300000,
                         const std::map<QString, QString>& extraEnv = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!db.isEmpty()) env.insert("VERDICT_DB", db);
    for (const auto& [k, v] : extraEnv) {
        if (v.isEmpty()) env.remove(k);
        else env.insert(k, v);
    }
    p.setProcessEnvironment(env);
    p.start(VERDICT_BINARY, args);
    p.waitForFinished(timeoutMs);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

// The binary with a temporary folder's database (v.db) and config dir, and no API key from the
// environment: what the CLI tests of one folder share.
inline CliRun runVerdictIn(const QStringList& args, const QString& dir, int timeoutMs = 180000) {
    return runVerdict(args, dir + "/v.db", timeoutMs, {{"XDG_CONFIG_HOME", dir + "/config"}, {"VERDICT_API_KEY", ""}});
}

}  // namespace verdict::test
