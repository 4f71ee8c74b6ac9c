#include "views/models/models_view.h"
#include "core/endpoints/provider_catalog.h"
#include "dialogs/add_endpoint_dialog.h"

#include "core/models/model_card_json.h"
#include "keyring/keyring.h"
#include "core/models/model_discovery.h"
#include "core/models/model_fit.h"
#include "verdict/engine/devices.h"
#include "widgets/device_combo.h"
#include "widgets/error_box.h"
#include "workbench.h"
#include "workers/job.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <memory>

namespace verdict::ui {

ModelsView::ModelsView(Workbench& workbench, QWidget* parent) : QWidget(parent), m_wb(workbench) {
    setObjectName("modelsView");
    auto* addFilesBtn = new QPushButton(tr("Add files…"));
    auto* addFolderBtn = new QPushButton(tr("Add folder…"));
    auto* discoverBtn = new QPushButton(tr("Discover on disk"));
    discoverBtn->setObjectName("discoverButton");
    discoverBtn->setToolTip(tr("Looks in LM Studio, Ollama, the Hugging Face cache and GPT4All"));
    auto* endpointBtn = new QPushButton(tr("Add endpoint…"));
    auto* removeBtn = new QPushButton(tr("Remove"));
    auto* asA = new QPushButton(tr("Use as A"));
    auto* asB = new QPushButton(tr("Use as B"));
    asA->setObjectName("useAsA");
    asB->setObjectName("useAsB");
    auto* buttons = new QHBoxLayout;
    for (QPushButton* b : {addFilesBtn, addFolderBtn, discoverBtn, endpointBtn, removeBtn}) buttons->addWidget(b);
    buttons->addStretch();
    buttons->addWidget(asA);
    buttons->addWidget(asB);

    m_proxy = new QSortFilterProxyModel(this);
    m_proxy->setSourceModel(m_wb.models());
    m_table = new QTableView;
    m_table->setObjectName("modelTable");
    m_table->setModel(m_proxy);
    m_table->setSortingEnabled(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();

    m_card = new QPlainTextEdit;
    m_card->setObjectName("modelCard");
    m_card->setReadOnly(true);
    m_card->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_card->setPlaceholderText(tr("Select a model to see its card: architecture, parameters, quantization, "
                                  "context, chat template, license and the memory it needs."));

    m_ctx = new QSpinBox;
    m_ctx->setRange(256, 1 << 20);
    m_ctx->setSingleStep(1024);
    m_ctx->setValue(static_cast<int>(m_wb.fitContext()));
    m_ctx->setSuffix(tr(" tokens"));
    // The device the fit badges are for, with its free memory now.
    m_deviceBox = new QComboBox;
    m_deviceBox->setObjectName("fitDevice");
    const DeviceList devices = listDevices();
    fillDeviceCombo(m_deviceBox, devices);
    const int gpu = devices.devices.size() > 1 ? 1 : 0;
    const int saved = m_deviceBox->findData(m_wb.fitDevice());
    m_deviceBox->setCurrentIndex(saved >= 0 ? saved : gpu);
    m_device = new QLabel(tr("Fit badges for"));
    auto* fitRow = new QHBoxLayout;
    fitRow->addWidget(m_device);
    fitRow->addWidget(m_deviceBox, 1);
    fitRow->addWidget(new QLabel(tr("at a context of")));
    fitRow->addWidget(m_ctx);

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_table);
    split->addWidget(m_card);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buttons);
    layout->addLayout(fitRow);
    layout->addWidget(split, 1);

    m_discoverJob = new Job(this);
    m_wb.registerJob(m_discoverJob);

    connect(addFilesBtn, &QPushButton::clicked, this, &ModelsView::addFiles);
    connect(addFolderBtn, &QPushButton::clicked, this, &ModelsView::addFolder);
    connect(discoverBtn, &QPushButton::clicked, this, &ModelsView::discover);
    connect(endpointBtn, &QPushButton::clicked, this, &ModelsView::addEndpoint);
    connect(removeBtn, &QPushButton::clicked, this, [this] {
        if (const QString ref = selectedRef(); !ref.isEmpty()) m_wb.removeModel(ref);
    });
    connect(asA, &QPushButton::clicked, this, [this] {
        if (const QString ref = selectedRef(); !ref.isEmpty())
            m_wb.setModels(ref, m_wb.modelB() == ref ? m_wb.modelA() : m_wb.modelB());
    });
    connect(asB, &QPushButton::clicked, this, [this] {
        if (const QString ref = selectedRef(); !ref.isEmpty())
            m_wb.setModels(m_wb.modelA() == ref ? m_wb.modelB() : m_wb.modelA(), ref);
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &ModelsView::showCard);
    connect(m_ctx, &QSpinBox::editingFinished, this, [this] { m_wb.setFitContext(static_cast<uint64_t>(m_ctx->value())); });
    connect(m_deviceBox, &QComboBox::currentIndexChanged, this, [this] {
        m_wb.setFitDevice(m_deviceBox->currentData().toString());
        showCard();
    });
    if (m_proxy->rowCount() > 0) m_table->selectRow(0);
    connect(m_discoverJob, &Job::stateChanged, discoverBtn, [discoverBtn](Job::State s) {
        discoverBtn->setEnabled(s == Job::State::Idle);
    });
}

QString ModelsView::selectedRef() const {
    const QModelIndex i = m_table->currentIndex();
    return i.isValid() ? m_proxy->data(i, ModelListModel::kRefRole).toString() : QString();
}

void ModelsView::showCard() {
    const ModelEntry* e = m_wb.models()->find(selectedRef());
    if (!e) {
        m_card->clear();
        return;
    }
    QString text;
    if (e->card) text = QString::fromStdString(core::modelCardToText(*e->card));
    else if (e->isEndpoint())
        text = tr("OpenAI-compatible endpoint %1\n\nThe card of a served model is not available; runs record the URL "
                  "and the served model name.")
                   .arg(e->ref);
    else text = e->error;
    if (!e->fitReason.isEmpty()) text = tr("Fit: %1 — %2\n\n").arg(e->fit, e->fitReason) + text;
    m_card->setPlainText(text);
}

void ModelsView::addPaths(const QStringList& paths, const QString& source) {
    QStringList failed;
    for (const QString& p : paths) {
        QString why;
        if (!m_wb.addModelFile(p, source, &why)) failed << why;
    }
    if (!failed.isEmpty())
        showError(this, tr("%n file(s) could not be added as models.", nullptr, int(failed.size())), failed.join("\n"));
}

void ModelsView::addFiles() {
    const QStringList paths = QFileDialog::getOpenFileNames(this, tr("Add GGUF models"), QString(), tr("GGUF models (*.gguf)"));
    addPaths(paths, "file");
}

int ModelsView::addFolderPath(const QString& folder) {
    const int before = m_wb.models()->rowCount();
    QStringList paths;
    for (const auto& m : core::scanFolder(folder.toStdString(), true).models) paths << QString::fromStdString(m.path);
    if (paths.isEmpty()) {
        showError(this, tr("No GGUF model was found in %1.").arg(folder));
        return 0;
    }
    addPaths(paths, "folder");
    return m_wb.models()->rowCount() - before;
}

void ModelsView::addFolder() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Add every GGUF model in a folder"));
    if (!dir.isEmpty()) addFolderPath(dir);
}

void ModelsView::addEndpoint() {
    // The provider presets: built-in + the user file; a broken user file leaves the built-in ones
    // (and says why) rather than no dialog.
    auto catalog = core::loadProviderCatalog(std::nullopt);
    if (!catalog) {
        showError(this, tr("The user provider catalog could not be read; only the built-in presets are offered."),
                  QString::fromStdString(catalog.error().message));
        catalog = core::ProviderCatalog::builtin();
    }
    AddEndpointDialog dlg(catalog ? std::move(*catalog) : core::ProviderCatalog{}, this);
    if (dlg.exec() != QDialog::Accepted) return;
    EndpointAccess access;
    access.provider = dlg.provider();
    access.caFile = dlg.caFile();
    access.insecure = dlg.insecure();
    access.tokenizer = dlg.tokenizer();
    if (dlg.url().contains('{')) {
        showError(this, tr("This endpoint cannot be added."),
                  tr("Replace the placeholder in the base URL (%1), e.g. {resource} by your Azure resource name.").arg(dlg.url()));
        return;
    }
    if (dlg.keySource() == AddEndpointDialog::KeyEnvironment) {
        access.keyEnv = dlg.keyEnv();
        if (access.keyEnv.isEmpty()) {
            showError(this, tr("This endpoint cannot be added."), tr("Name the environment variable that holds the key."));
            return;
        }
    } else if (dlg.keySource() == AddEndpointDialog::KeyKeyring) {
        QString why;
        if (dlg.key().isEmpty() || !storeEndpointKey(dlg.url(), dlg.key(), &why)) {
            showError(this, tr("The key could not be stored in the desktop keyring."),
                      dlg.key().isEmpty() ? tr("The key is empty.")
                                          : why + "\n" + tr("Put the key in an environment variable and choose that instead."));
            return;
        }
        access.keyInKeyring = true;
    }
    QString why;
    if (!m_wb.addEndpoint(dlg.url(), dlg.model(), access, &why)) showError(this, tr("This endpoint cannot be added."), why);
}

void ModelsView::discover() {
    auto found = std::make_shared<std::vector<core::DiscoveredModel>>();
    auto warnings = std::make_shared<std::vector<std::string>>();
    m_discoverJob->start([found, warnings](JobControl& c) {
        c.report(-1, tr("Looking for models…"));
        core::DiscoveryResult r = core::discoverModels(core::defaultDiscoveryRoots());
        *found = std::move(r.models);
        *warnings = std::move(r.warnings);
        return JobResult{};
    });
    connect(m_discoverJob, &Job::finished, this, [this, found, warnings](const JobResult&, bool) {
        if (found->empty()) {
            QString detail;
            for (const auto& w : *warnings) detail += QString::fromStdString(w) + "\n";
            showError(this, tr("No GGUF models were found in LM Studio, Ollama, the Hugging Face cache or GPT4All."),
                      detail);
            return;
        }
        QDialog dlg(this);
        dlg.setWindowTitle(tr("Models found on this computer"));
        auto* list = new QListWidget;
        for (const auto& m : *found) {
            auto* item = new QListWidgetItem(QString("%1  [%2, %3]").arg(QString::fromStdString(m.name),
                                                                         QString::fromStdString(m.source),
                                                                         QString::fromStdString(core::formatBytes(m.bytes))));
            item->setData(Qt::UserRole, QString::fromStdString(m.path));
            item->setData(Qt::UserRole + 1, QString::fromStdString(m.source));
            item->setToolTip(QString::fromStdString(m.path));
            item->setCheckState(Qt::Checked);
            list->addItem(item);
        }
        auto* bb = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
        auto* lay = new QVBoxLayout(&dlg);
        lay->addWidget(new QLabel(tr("Add the checked models to the workspace:")));
        lay->addWidget(list);
        lay->addWidget(bb);
        connect(bb, &QDialogButtonBox::accepted, &dlg, &QDialog::accept);
        connect(bb, &QDialogButtonBox::rejected, &dlg, &QDialog::reject);
        if (dlg.exec() != QDialog::Accepted) return;
        for (int i = 0; i < list->count(); ++i) {
            QListWidgetItem* item = list->item(i);
            if (item->checkState() == Qt::Checked)
                addPaths({item->data(Qt::UserRole).toString()}, item->data(Qt::UserRole + 1).toString());
        }
    }, Qt::SingleShotConnection);
}

}  // namespace verdict::ui
