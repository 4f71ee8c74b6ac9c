// "Add endpoint…" of the Models screen: base URL, served model, where the key comes from
// (VERDICT_API_KEY, an environment variable, or the desktop keyring — never Verdict's settings),
// https checks, and a provider combo filled from the provider catalog (core/endpoints/
// provider_catalog.h, the table `verdict endpoints list` prints) that pre-fills the base URL and
// the key variable and shows the model's prices with their sources; optionally a GGUF with the
// served model's tokenizer, so that load tests count tokens beside the server's usage.
#pragma once

#include "core/endpoints/provider_catalog.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace verdict::ui {

class AddEndpointDialog : public QDialog {
    Q_OBJECT
public:
    enum KeySource { KeyDefault = 0, KeyEnvironment = 1, KeyKeyring = 2 };

    // `catalog`: the presets offered (built-in + user file); empty: only "Custom".
    AddEndpointDialog(core::ProviderCatalog catalog, QWidget* parent = nullptr);

    QString provider() const;   // the preset id, "" for a custom endpoint
    QString url() const;
    QString model() const;
    int keySource() const;
    QString keyEnv() const;
    QString key() const;
    QString caFile() const;
    bool insecure() const;
    QString tokenizer() const;  // a GGUF to count tokens with beside the server's usage ("" none)

    // Chooses a preset by id ("" custom), as picking it in the combo does.
    void selectProvider(const QString& id);

private:
    void providerChanged();
    void updatePrices();
    void syncKeyFields();

    core::ProviderCatalog m_catalog;
    QComboBox* m_provider = nullptr;
    QLineEdit* m_url = nullptr;
    QLineEdit* m_model = nullptr;
    QComboBox* m_keySource = nullptr;
    QLineEdit* m_keyEnv = nullptr;
    QLineEdit* m_key = nullptr;
    QLabel* m_keyringEntry = nullptr;
    QLineEdit* m_ca = nullptr;
    QCheckBox* m_insecure = nullptr;
    QLineEdit* m_tokenizer = nullptr;
    QLabel* m_prices = nullptr;
};

}  // namespace verdict::ui
