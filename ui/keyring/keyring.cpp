#include "keyring/keyring.h"

#include <qt6keychain/keychain.h>

#include <QEventLoop>
#include <QTimer>

namespace verdict::ui {
namespace {

const QString kService = QStringLiteral("Verdict");

// Runs a QtKeychain job to its end (or 15 s); false with its error text when it failed.
bool finish(QKeychain::Job& job, QString* error) {
    job.setAutoDelete(false);
    QEventLoop loop;
    bool done = false;
    QObject::connect(&job, &QKeychain::Job::finished, &loop, [&] {
        done = true;
        loop.quit();
    });
    QTimer::singleShot(15000, &loop, &QEventLoop::quit);
    job.start();
    if (!done) loop.exec();
    if (!done) {
        if (error) *error = QObject::tr("the keyring did not answer within 15 s");
        return false;
    }
    if (job.error() != QKeychain::NoError) {
        if (error) *error = job.errorString().isEmpty() ? QObject::tr("the keyring refused (error %1)").arg(job.error()) : job.errorString();
        return false;
    }
    return true;
}

}  // namespace

bool storeEndpointKey(const QString& url, const QString& key, QString* error) {
    QKeychain::WritePasswordJob job(kService);
    job.setKey(url);
    job.setTextData(key);
    return finish(job, error);
}

std::optional<std::string> readEndpointKey(const QString& url, QString* error) {
    QKeychain::ReadPasswordJob job(kService);
    job.setKey(url);
    if (!finish(job, error)) return std::nullopt;
    return job.textData().toStdString();
}

bool deleteEndpointKey(const QString& url, QString* error) {
    QKeychain::DeletePasswordJob job(kService);
    job.setKey(url);
    return finish(job, error);
}

}  // namespace verdict::ui
