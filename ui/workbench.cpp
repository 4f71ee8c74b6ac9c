#include "workbench.h"

#include "core/endpoints/provider_catalog.h"
#include "core/endpoints/token_count.h"

#include "core/models/model_fit.h"
#include "core/store/run_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"
#include "core/suite/suite_importer.h"
#include "core/workspace/demo_resources.h"
#include "verdict/engine/devices.h"
#include "workers/job.h"

#include "keyring/keyring.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>

#include <algorithm>

namespace verdict::ui {

Workbench::Workbench(QString dbPath, QObject* parent)
    : QObject(parent), m_dbPath(std::move(dbPath)), m_models(new ModelListModel(this)) {}

Result<core::Database> Workbench::openDb() const { return core::openStore(m_dbPath.toStdString()); }

bool Workbench::addModelFile(const QString& path, const QString& source, QString* error) {
    ModelEntry e;
    e.ref = QFileInfo(path).absoluteFilePath();
    e.source = source;
    auto card = describeModelFile(e.ref.toStdString(), m_fitCtx);
    if (!card) {
        if (error) *error = QString::fromStdString(card.error().message);
        return false;
    }
    const QString file = QFileInfo(path).fileName();
    e.name = card->name.empty() ? QFileInfo(path).completeBaseName() : QString::fromStdString(card->name);
    if (m_models->rowCount() > 0) {
        // Two files with the same general.name (a Q4 and a Q8 of one model) need the file name.
        for (const auto& other : m_models->entries())
            if (other.name == e.name && other.ref != e.ref) e.name += " (" + file + ")";
    }
    e.card = std::move(*card);
    m_models->upsert(std::move(e));
    refreshFit(m_models->rowOf(QFileInfo(path).absoluteFilePath()));
    if (m_modelA.isEmpty()) m_modelA = QFileInfo(path).absoluteFilePath();
    else if (m_modelB.isEmpty() && m_modelA != QFileInfo(path).absoluteFilePath()) m_modelB = QFileInfo(path).absoluteFilePath();
    emit modelsChanged();
    emit selectionChanged();
    return true;
}

bool Workbench::addEndpoint(const QString& url, const QString& model, const EndpointAccess& access, QString* error) {
    const QString u = url.trimmed();
    if (!u.startsWith("http://") && !u.startsWith("https://")) {
        if (error) *error = tr("an endpoint URL starts with http:// or https://, e.g. http://127.0.0.1:8080");
        return false;
    }
    if (!access.caFile.isEmpty()) {
        if (access.insecure) {
            if (error) *error = tr("a CA file and \"do not verify\" contradict each other; choose one");
            return false;
        }
        QFile ca(access.caFile);
        if (!ca.open(QIODevice::ReadOnly) || !ca.read(1 << 20).contains("-----BEGIN CERTIFICATE-----")) {
            if (error) *error = tr("%1: not a readable PEM certificate file (-----BEGIN CERTIFICATE-----)").arg(access.caFile);
            return false;
        }
    }
    if (!access.tokenizer.isEmpty()) {
        auto counter = core::TokenCounter::open(access.tokenizer.toStdString());
        if (!counter) {
            if (error) *error = QString::fromStdString(counter.error().message);
            return false;
        }
    }
    if (u.contains(' ')) {
        if (error) *error = tr("the URL must not contain spaces");
        return false;
    }
    ModelEntry e;
    e.ref = model.trimmed().isEmpty() ? u : u + " " + model.trimmed();
    e.source = "endpoint";
    e.name = model.trimmed().isEmpty() ? u : model.trimmed() + " @ " + u;
    e.access = access;
    m_models->upsert(std::move(e));
    emit modelsChanged();
    return true;
}

bool Workbench::applyEndpointAccess(const QString& ref, core::BackendOpenOptions& o, QString* error) const {
    if (!core::isEndpointRef(ref.toStdString())) return true;
    const int row = m_models->rowOf(ref);
    const EndpointAccess access = row >= 0 ? m_models->entries()[static_cast<size_t>(row)].access : EndpointAccess{};
    o.caFile = access.caFile.toStdString();
    o.insecure = access.insecure;
    o.tokenizer = access.tokenizer.toStdString();
    o.apiKey.clear();
    const QString url = ref.section(' ', 0, 0);
    o.endpointApi = {};
    if (!access.provider.isEmpty()) {  // the preset's key header and routes, for the URL as added
        auto catalog = core::loadProviderCatalog(std::nullopt);
        const core::ProviderPreset* preset = catalog ? catalog->find(access.provider.toStdString()) : nullptr;
        if (!preset) {
            if (error)
                *error = tr("The provider preset %1 of %2 is not in the provider catalog%3.")
                             .arg(access.provider, url, catalog ? QString() : ": " + QString::fromStdString(catalog.error().message));
            return false;
        }
        auto ep = core::providerEndpoint(*preset, {url.toStdString(), "", ""});
        if (!ep) {
            if (error) *error = QString::fromStdString(ep.error().message);
            return false;
        }
        o.endpointApi = ep->api;
    }
    if (access.keyInKeyring) {
        QString why;
        auto key = readEndpointKey(url, &why);
        if (!key) {
            if (error) *error = tr("The API key of %1 is not in the keyring: %2. Add the endpoint again with the key in an "
                                   "environment variable.").arg(url, why);
            return false;
        }
        o.apiKey = std::move(*key);
    } else if (!access.keyEnv.isEmpty()) {
        const QByteArray v = qgetenv(access.keyEnv.toUtf8().constData());
        if (v.isEmpty()) {
            if (error) *error = tr("The API key of %1 should come from $%2, which is not set.").arg(url, access.keyEnv);
            return false;
        }
        o.apiKey = v.toStdString();
    } else {
        o.apiKey = qgetenv("VERDICT_API_KEY").toStdString();
    }
    return true;
}

void Workbench::removeModel(const QString& ref) {
    // An endpoint's key leaves the keyring with the last entry of its URL that used it.
    if (const int row = m_models->rowOf(ref); row >= 0 && m_models->entries()[static_cast<size_t>(row)].access.keyInKeyring) {
        const QString url = ref.section(' ', 0, 0);
        bool shared = false;
        for (const auto& e : m_models->entries())
            shared = shared || (e.ref != ref && e.access.keyInKeyring && e.ref.section(' ', 0, 0) == url);
        if (!shared) deleteEndpointKey(url, nullptr);
    }
    m_models->removeRow(m_models->rowOf(ref));
    if (m_modelA == ref) m_modelA.clear();
    if (m_modelB == ref) m_modelB.clear();
    emit modelsChanged();
    emit selectionChanged();
}

QString Workbench::displayName(const QString& ref) const {
    if (const ModelEntry* e = m_models->find(ref)) return e->name;
    return QFileInfo(ref).completeBaseName();
}

void Workbench::setModels(const QString& a, const QString& b) {
    if (a == m_modelA && b == m_modelB) return;
    m_modelA = a;
    m_modelB = b;
    emit selectionChanged();
}

void Workbench::setComparedRuns(int64_t a, int64_t b) {
    if (a == m_runA && b == m_runB) return;
    m_runA = a;
    m_runB = b;
    emit comparedRunsChanged();
}

bool Workbench::pickLatestRuns() {
    auto db = openDb();
    if (!db) return false;
    auto runs = core::RunRepository(*db).list();
    if (!runs) return false;
    // Newest completed run of A, then the newest completed run of B on the same suite.
    const std::string a = m_modelA.toStdString(), b = m_modelB.toStdString();
    for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
        if (it->status != core::RunStatus::Completed || it->modelPath != a) continue;
        for (auto jt = runs->rbegin(); jt != runs->rend(); ++jt)
            if (jt->status == core::RunStatus::Completed && jt->modelPath == b && jt->suiteId == it->suiteId) {
                setComparedRuns(it->id, jt->id);
                return true;
            }
    }
    return false;
}

void Workbench::setFitContext(uint64_t ctx) {
    m_fitCtx = std::max<uint64_t>(ctx, 1);
    for (int r = 0; r < m_models->rowCount(); ++r) refreshFit(r);
}

QString Workbench::fitDevice() const {
    if (!m_fitDevice.isEmpty()) return m_fitDevice;
    const DeviceList devices = listDevices();
    return QString::fromStdString(devices.devices.size() > 1 ? devices.devices[1].id : devices.devices.front().id);
}

void Workbench::setFitDevice(const QString& id) {
    m_fitDevice = id;
    for (int r = 0; r < m_models->rowCount(); ++r) refreshFit(r);
}

void Workbench::setRunDevice(const QString& id) {
    const QString device = id.isEmpty() ? QString("cpu") : id;
    if (device == m_runDevice) return;
    m_runDevice = device;
    emit runDeviceChanged();
}

void Workbench::setRunGpuLayers(int n) {
    const int layers = n < 0 ? -1 : n;
    if (layers == m_runGpuLayers) return;
    m_runGpuLayers = layers;
    emit runGpuLayersChanged();
}

void Workbench::refreshFit(int row) {
    if (row < 0 || row >= m_models->rowCount()) return;
    const ModelEntry& e = m_models->entries()[static_cast<size_t>(row)];
    if (!e.card) return;
    const DeviceList devices = listDevices();
    // The chosen device; by default the GPU when there is one (where a user would run it), else the CPU.
    const DeviceInfo* chosen = devices.devices.size() > 1 ? &devices.devices[1] : &devices.devices.front();
    for (const DeviceInfo& d : devices.devices)
        if (QString::fromStdString(d.id) == m_fitDevice) chosen = &d;
    const DeviceInfo& device = *chosen;
    const core::FitVerdict v = core::assessFit(*e.card, m_fitCtx, device);
    const QString fit = v.fit == core::Fit::Fits          ? tr("fits")
                        : v.fit == core::Fit::Tight       ? tr("tight")
                        : v.fit == core::Fit::Unsupported ? tr("can't run")
                                                          : tr("won't fit");
    m_models->updateFit(row, fit, QString::fromStdString(v.reason));
}

void Workbench::registerJob(Job* job) {
    m_jobs.erase(std::remove_if(m_jobs.begin(), m_jobs.end(), [](const QPointer<Job>& j) { return j.isNull(); }),
                 m_jobs.end());
    m_jobs.emplace_back(job);
}

bool Workbench::anyJobRunning() const {
    return std::any_of(m_jobs.begin(), m_jobs.end(), [](const QPointer<Job>& j) { return j && j->busy(); });
}

void Workbench::cancelAllJobs() {
    for (const auto& j : m_jobs)
        if (j) j->cancel();
}

void Workbench::waitAllJobs() {
    for (const auto& j : m_jobs)
        if (j) j->wait();
}

bool Workbench::prepareDemoWorkspace(QString* error) {
    auto res = core::findDemoResources(core::currentExecutable());
    if (!res) {
        if (error) *error = QString::fromStdString(res.error().message);
        return false;
    }
    QString why;
    if (!addModelFile(QString::fromStdString(res->largeModel), "demo", &why) ||
        !addModelFile(QString::fromStdString(res->smallModel), "demo", &why)) {
        if (error) *error = why;
        return false;
    }
    setModels(QFileInfo(QString::fromStdString(res->largeModel)).absoluteFilePath(),
              QFileInfo(QString::fromStdString(res->smallModel)).absoluteFilePath());
    auto db = openDb();
    if (!db) {
        if (error) *error = QString::fromStdString(db.error().message);
        return false;
    }
    core::SuiteRepository suites(*db);
    for (const std::string& file : res->suites) {
        core::ImportOptions opts;
        opts.name = core::demoSuiteName(file);
        auto existing = suites.findByName(opts.name);
        if (existing && *existing) continue;
        if (auto stored = core::importSuiteToStore(*db, file, opts); !stored) {
            if (error) *error = QString::fromStdString(stored.error().message);
            return false;
        }
    }
    emit resultsChanged();
    return true;
}

void Workbench::saveState() const {
    QSettings s;
    QStringList list;
    for (const auto& e : m_models->entries()) {
        QString line = e.source + "\t" + e.ref;
        if (e.isEndpoint()) {  // how to reach it, never the key
            QJsonObject a{{"key_env", e.access.keyEnv}, {"key_in_keyring", e.access.keyInKeyring},
                          {"ca_file", e.access.caFile}, {"insecure", e.access.insecure}, {"provider", e.access.provider},
                          {"tokenizer", e.access.tokenizer}};
            line += "\t" + QString::fromUtf8(QJsonDocument(a).toJson(QJsonDocument::Compact));
        }
        list << line;
    }
    s.setValue("workspace/models", list);
    s.setValue("workspace/modelA", m_modelA);
    s.setValue("workspace/modelB", m_modelB);
    s.setValue("workspace/fitContext", static_cast<qulonglong>(m_fitCtx));
    s.setValue("workspace/fitDevice", m_fitDevice);
    s.setValue("workspace/runDevice", m_runDevice);
    s.setValue("workspace/runGpuLayers", m_runGpuLayers);
    s.setValue("workspace/initialized", true);
}

void Workbench::restoreState() {
    QSettings s;
    m_fitCtx = std::max<qulonglong>(s.value("workspace/fitContext", 4096).toULongLong(), 1);
    m_fitDevice = s.value("workspace/fitDevice").toString();
    setRunDevice(s.value("workspace/runDevice", "cpu").toString());
    setRunGpuLayers(s.value("workspace/runGpuLayers", -1).toInt());
    for (const QString& line : s.value("workspace/models").toStringList()) {
        const QString source = line.section('\t', 0, 0), ref = line.section('\t', 1, 1);
        if (source == "endpoint") {
            const QString url = ref.section(' ', 0, 0), model = ref.section(' ', 1);
            const QJsonObject a = QJsonDocument::fromJson(line.section('\t', 2).toUtf8()).object();
            EndpointAccess access;
            access.keyEnv = a.value("key_env").toString();
            access.keyInKeyring = a.value("key_in_keyring").toBool();
            access.caFile = a.value("ca_file").toString();
            access.insecure = a.value("insecure").toBool();
            access.provider = a.value("provider").toString();
            access.tokenizer = a.value("tokenizer").toString();
            addEndpoint(url, model, access, nullptr);
        } else {
            addModelFile(ref, source, nullptr);  // a file deleted since then is dropped
        }
    }
    const QString a = s.value("workspace/modelA").toString(), b = s.value("workspace/modelB").toString();
    setModels(m_models->rowOf(a) >= 0 ? a : m_modelA, m_models->rowOf(b) >= 0 ? b : m_modelB);
}

}  // namespace verdict::ui
