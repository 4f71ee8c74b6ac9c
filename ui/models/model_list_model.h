// The models of the workspace (GGUF files and OpenAI-compatible endpoints) as a table: name,
// source, architecture, parameters, quantization, size, context and whether it fits the chosen
// device. Rows are added by the Workbench; each row's card is read once, when it is added.
#pragma once

#include "verdict/engine/model_card.h"

#include <QAbstractTableModel>
#include <QString>

#include <optional>
#include <vector>

namespace verdict::ui {

// How the window reaches an endpoint: where its API key comes from and how https is checked
// (the CLI's --api-key-env / --ca-file / --insecure). Saved with the workspace; the key itself
// never is: it lives in the environment or in the desktop keyring (ui/keyring).
struct EndpointAccess {
    QString keyEnv;             // environment variable holding the key; "" : $VERDICT_API_KEY when set
    bool keyInKeyring = false;  // the key is in the desktop keyring under the endpoint's URL
    QString caFile;             // https: trust this PEM file instead of the system CA store
    bool insecure = false;      // https: no certificate check (runs record it as their device)
    QString provider;           // provider preset id ("" none): its key header and routes (--provider)
    QString tokenizer;          // a GGUF with the served model's tokenizer ("" none): token accounting (--tokenizer)
};

struct ModelEntry {
    QString ref;       // a GGUF path, or "http://host:port MODEL" for an endpoint
    QString source;    // "demo", "file", "folder", "lmstudio", "ollama", "huggingface", "gpt4all", "endpoint"
    QString name;      // what lists show
    std::optional<ModelCard> card;  // files whose metadata could be read
    QString error;     // why the card is missing (files only)
    QString fit;       // "fits", "tight", "won't fit" or "" (unknown / endpoint)
    QString fitReason; // one sentence
    EndpointAccess access;  // endpoints only
    bool isEndpoint() const { return ref.startsWith("http://") || ref.startsWith("https://"); }
};

class ModelListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Name, Source, Arch, Params, Quant, Size, Context, Fit, ColumnCount };
    static constexpr int kRefRole = Qt::UserRole + 1;

    explicit ModelListModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    const std::vector<ModelEntry>& entries() const { return m_entries; }
    const ModelEntry* find(const QString& ref) const;
    int rowOf(const QString& ref) const;  // -1 when absent
    // Appends, or replaces the row with the same ref.
    void upsert(ModelEntry entry);
    void removeRow(int row);
    void updateFit(int row, const QString& fit, const QString& reason);

private:
    std::vector<ModelEntry> m_entries;
};

}  // namespace verdict::ui
