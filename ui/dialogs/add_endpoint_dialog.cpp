#include "dialogs/add_endpoint_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

namespace verdict::ui {
namespace {

QString money(const core::PriceFigure& f) {
    return f.value ? QStringLiteral("$%1").arg(*f.value, 0, 'g', 4) : QStringLiteral("—");
}

}  // namespace

AddEndpointDialog::AddEndpointDialog(core::ProviderCatalog catalog, QWidget* parent)
    : QDialog(parent), m_catalog(std::move(catalog)) {
    setWindowTitle(tr("Add an OpenAI-compatible endpoint"));
    m_provider = new QComboBox;
    m_provider->setObjectName("endpointProvider");
    m_provider->addItem(tr("Custom (any OpenAI-compatible server)"), QString());
    for (const core::ProviderPreset& p : m_catalog.entries())
        m_provider->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(p.name), QString::fromStdString(p.id)),
                            QString::fromStdString(p.id));
    m_url = new QLineEdit("http://127.0.0.1:8080");
    m_url->setObjectName("endpointUrl");
    m_model = new QLineEdit;
    m_model->setObjectName("endpointModel");
    m_model->setPlaceholderText(tr("optional: the served model (default: the first of /v1/models)"));
    m_keySource = new QComboBox;
    m_keySource->setObjectName("endpointKeySource");
    m_keySource->addItems({tr("$VERDICT_API_KEY when set"), tr("Environment variable"), tr("Desktop keyring")});
    m_keyEnv = new QLineEdit;
    m_keyEnv->setObjectName("endpointKeyEnv");
    m_keyEnv->setPlaceholderText(tr("e.g. DEEPSEEK_API_KEY"));
    m_key = new QLineEdit;
    m_key->setObjectName("endpointKey");
    m_key->setEchoMode(QLineEdit::Password);
    m_key->setPlaceholderText(tr("stored in the keyring only, never in Verdict's files"));
    m_keyringEntry = new QLabel;
    m_keyringEntry->setObjectName("endpointKeyringEntry");
    m_ca = new QLineEdit;
    m_ca->setObjectName("endpointCaFile");
    m_ca->setPlaceholderText(tr("https with a private or self-signed certificate: its PEM file"));
    auto* browse = new QPushButton(tr("Browse…"));
    auto* caRow = new QHBoxLayout;
    caRow->addWidget(m_ca);
    caRow->addWidget(browse);
    m_insecure = new QCheckBox(tr("Do not verify the certificate (results say so)"));
    m_insecure->setObjectName("endpointInsecure");
    m_tokenizer = new QLineEdit;
    m_tokenizer->setObjectName("endpointTokenizer");
    m_tokenizer->setPlaceholderText(tr("optional: the model's GGUF or a vocab-only GGUF, to check the server's token counts"));
    auto* browseTok = new QPushButton(tr("Browse…"));
    auto* tokRow = new QHBoxLayout;
    tokRow->addWidget(m_tokenizer);
    tokRow->addWidget(browseTok);
    m_prices = new QLabel;
    m_prices->setObjectName("endpointPrices");
    m_prices->setWordWrap(true);
    m_prices->setTextInteractionFlags(Qt::TextSelectableByMouse);

    connect(m_provider, &QComboBox::currentIndexChanged, this, &AddEndpointDialog::providerChanged);
    connect(m_model, &QLineEdit::textChanged, this, &AddEndpointDialog::updatePrices);
    connect(m_url, &QLineEdit::textChanged, this, &AddEndpointDialog::syncKeyFields);
    connect(m_keySource, &QComboBox::currentIndexChanged, this, &AddEndpointDialog::syncKeyFields);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("CA certificate"), {}, tr("PEM certificates (*.pem *.crt);;All files (*)"));
        if (!f.isEmpty()) m_ca->setText(f);
    });
    connect(browseTok, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Tokenizer"), {}, tr("GGUF files (*.gguf);;All files (*)"));
        if (!f.isEmpty()) m_tokenizer->setText(f);
    });

    auto* form = new QFormLayout(this);
    form->addRow(tr("Provider"), m_provider);
    form->addRow(tr("Base URL"), m_url);
    form->addRow(tr("Model"), m_model);
    form->addRow(tr("Prices"), m_prices);
    form->addRow(tr("API key"), m_keySource);
    form->addRow(tr("Variable"), m_keyEnv);
    form->addRow(tr("Key"), m_key);
    form->addRow(QString(), m_keyringEntry);
    form->addRow(tr("CA file"), caRow);
    form->addRow(QString(), m_insecure);
    form->addRow(tr("Tokenizer"), tokRow);
    form->addRow(new QLabel(tr("vLLM, SGLang, TGI, llama-server, Ollama, hosted APIs, verdict serve… "
                               "Presets and prices: verdict endpoints list.")));
    auto* bb = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(bb);
    connect(bb, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(bb, &QDialogButtonBox::rejected, this, &QDialog::reject);
    providerChanged();
}

QString AddEndpointDialog::provider() const { return m_provider->currentData().toString(); }
QString AddEndpointDialog::url() const { return m_url->text().trimmed(); }
QString AddEndpointDialog::model() const { return m_model->text().trimmed(); }
int AddEndpointDialog::keySource() const { return m_keySource->currentIndex(); }
QString AddEndpointDialog::keyEnv() const { return m_keyEnv->text().trimmed(); }
QString AddEndpointDialog::key() const { return m_key->text(); }
QString AddEndpointDialog::caFile() const { return m_ca->text().trimmed(); }
bool AddEndpointDialog::insecure() const { return m_insecure->isChecked(); }
QString AddEndpointDialog::tokenizer() const { return m_tokenizer->text().trimmed(); }

void AddEndpointDialog::selectProvider(const QString& id) {
    const int i = m_provider->findData(id);
    if (i >= 0) m_provider->setCurrentIndex(i);
}

void AddEndpointDialog::providerChanged() {
    const core::ProviderPreset* p = m_catalog.find(provider().toStdString());
    if (p) {
        // The Azure template keeps its {resource} for the user to replace (checked on adding).
        m_url->setText(QString::fromStdString(p->baseUrl));
        m_keyEnv->setText(QString::fromStdString(p->keyEnv));
        if (p->auth == core::EndpointAuth::None) m_keySource->setCurrentIndex(KeyDefault);
        else if (!p->keyEnv.empty()) m_keySource->setCurrentIndex(KeyEnvironment);
        if (!p->prices.empty() && m_model->text().isEmpty()) m_model->setText(QString::fromStdString(p->prices.front().model));
        m_model->setPlaceholderText(p->chatRoute.find("{model}") != std::string::npos
                                        ? tr("the deployment name (required)")
                                        : tr("optional: the served model (default: the first of /v1/models)"));
    }
    syncKeyFields();
    updatePrices();
}

void AddEndpointDialog::syncKeyFields() {
    m_keyEnv->setEnabled(m_keySource->currentIndex() == KeyEnvironment);
    m_key->setEnabled(m_keySource->currentIndex() == KeyKeyring);
    m_keyringEntry->setVisible(m_keySource->currentIndex() == KeyKeyring);
    m_keyringEntry->setText(tr("keyring entry: service \"Verdict\", account %1").arg(url()));
}

void AddEndpointDialog::updatePrices() {
    const core::ProviderPreset* p = m_catalog.find(provider().toStdString());
    if (!p) {
        m_prices->setText(tr("a custom endpoint: no catalog prices"));
        return;
    }
    if (p->prices.empty()) {
        m_prices->setText(QString::fromStdString(p->pricesNote));
        return;
    }
    const core::ModelPrice* m = p->priceOf(model().toStdString());
    if (!m) {
        QStringList names;
        for (const core::ModelPrice& mp : p->prices) names << QString::fromStdString(mp.model);
        m_prices->setText(tr("no price for this model; priced: %1").arg(names.join(", ")));
        return;
    }
    m_prices->setText(tr("per 1M tokens: input %1, cached input %2, output %3 (reasoning billed as output)\n"
                         "source: %4, as of %5")
                          .arg(money(m->input), money(m->cachedInput), money(m->output),
                               QString::fromStdString(m->output.source), QString::fromStdString(m->output.asOf)));
    m_prices->setToolTip(QString::fromStdString(m->output.url));
}

}  // namespace verdict::ui
