// The Models screen's "Add endpoint…" dialog (ui/dialogs/add_endpoint_dialog.h): its provider
// combo is filled from the provider catalog and pre-fills the base URL, the key variable and the
// prices of the chosen model; a workspace endpoint added with a preset gets the preset's key
// header and routes when it is opened (Workbench::applyEndpointAccess). Offscreen, no exec().
#include "dialogs/add_endpoint_dialog.h"
#include "workbench.h"

#include "tiny_model.h"

#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QTemporaryDir>
#include <QTest>

using namespace verdict;

class TestAddEndpointDialog : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        qputenv("XDG_CONFIG_HOME", m_dir.filePath("config").toUtf8());  // no user catalog leaks in
    }

    void providerComboPrefills() {
        auto catalog = core::ProviderCatalog::builtin();
        QVERIFY(catalog.ok());
        ui::AddEndpointDialog dlg(*catalog);
        auto* combo = dlg.findChild<QComboBox*>("endpointProvider");
        auto* url = dlg.findChild<QLineEdit*>("endpointUrl");
        auto* keyEnv = dlg.findChild<QLineEdit*>("endpointKeyEnv");
        auto* keySource = dlg.findChild<QComboBox*>("endpointKeySource");
        auto* model = dlg.findChild<QLineEdit*>("endpointModel");
        auto* prices = dlg.findChild<QLabel*>("endpointPrices");
        QVERIFY(combo && url && keyEnv && keySource && model && prices);
        QCOMPARE(combo->count(), 16);  // Custom + the 15 presets
        QCOMPARE(dlg.provider(), QString());
        QCOMPARE(url->text(), QString("http://127.0.0.1:8080"));  // custom: as before

        combo->setCurrentIndex(combo->findData(QString("deepseek")));
        QCOMPARE(dlg.provider(), QString("deepseek"));
        QCOMPARE(url->text(), QString("https://api.deepseek.com"));
        QCOMPARE(keyEnv->text(), QString("DEEPSEEK_API_KEY"));
        QCOMPARE(keySource->currentIndex(), int(ui::AddEndpointDialog::KeyEnvironment));
        QCOMPARE(model->text(), QString("deepseek-chat"));
        QVERIFY2(prices->text().contains("$0.28") && prices->text().contains("$0.028") && prices->text().contains("$0.42"),
                 qPrintable(prices->text()));
        model->setText("deepseek-reasoner");
        QVERIFY(prices->text().contains("$0.42"));
        model->setText("not-priced");
        QVERIFY2(prices->text().contains("deepseek-chat, deepseek-reasoner"), qPrintable(prices->text()));

        dlg.selectProvider("azure-openai");
        QVERIFY(url->text().contains("{resource}"));
        QCOMPARE(keyEnv->text(), QString("AZURE_OPENAI_API_KEY"));
        QVERIFY(prices->text().contains("region"));
        dlg.selectProvider("ollama");
        QCOMPARE(url->text(), QString("http://127.0.0.1:11434"));
        QCOMPARE(keySource->currentIndex(), int(ui::AddEndpointDialog::KeyDefault));
        QVERIFY(prices->text().contains("TCO"));
    }

    void presetEndpointGetsItsKeyHeaderAndRoutes() {
        ui::Workbench wb(m_dir.filePath("v.db"));
        ui::EndpointAccess access;
        access.provider = "azure-openai";
        QString why;
        const QString url = "https://myres.openai.azure.com/openai";
        QVERIFY2(wb.addEndpoint(url, "prod-4o", access, &why), qPrintable(why));
        core::BackendOpenOptions o;
        QVERIFY2(wb.applyEndpointAccess(url + " prod-4o", o, &why), qPrintable(why));
        QCOMPARE(o.endpointApi.auth, core::EndpointAuth::ApiKeyHeader);
        QCOMPARE(o.endpointApi.provider, std::string("azure-openai"));
        QCOMPARE(o.endpointApi.query, std::string("api-version=2024-10-21"));
        QCOMPARE(o.endpointApi.chatRoute, std::string("/deployments/{model}/chat/completions"));
        access.provider = "gone";
        QVERIFY(wb.addEndpoint(url, "x", access, &why));
        QVERIFY(!wb.applyEndpointAccess(url + " x", o, &why));
        QVERIFY2(why.contains("gone"), qPrintable(why));
    }

    // The tokenizer for token accounting: typed in the dialog, checked when the endpoint is added
    // (a file that is no GGUF is refused, naming it), handed to load tests, kept with the workspace.
    void tokenizerIsCheckedAndHandedOn() {
        auto catalog = core::ProviderCatalog::builtin();
        QVERIFY(catalog.ok());
        ui::AddEndpointDialog dlg(*catalog);
        auto* tok = dlg.findChild<QLineEdit*>("endpointTokenizer");
        QVERIFY(tok);
        QCOMPARE(dlg.tokenizer(), QString());
        tok->setText("  /models/qwen.gguf ");
        QCOMPARE(dlg.tokenizer(), QString("/models/qwen.gguf"));

        ui::Workbench wb(m_dir.filePath("t.db"));
        ui::EndpointAccess access;
        const QString bad = m_dir.filePath("bad.gguf");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not a gguf");
        f.close();
        access.tokenizer = bad;
        QString why;
        QVERIFY(!wb.addEndpoint("http://127.0.0.1:9", "m", access, &why));
        QVERIFY2(why.contains(bad), qPrintable(why));

        const QString model = m_dir.filePath("tok.gguf");
        QVERIFY(test::writeTinyModel(model.toStdString()).ok());
        access.tokenizer = model;
        QVERIFY2(wb.addEndpoint("http://127.0.0.1:9", "m", access, &why), qPrintable(why));
        core::BackendOpenOptions o;
        QVERIFY(wb.applyEndpointAccess("http://127.0.0.1:9 m", o, &why));
        QCOMPARE(o.tokenizer, model.toStdString());
    }

private:
    QTemporaryDir m_dir;
};

QTEST_MAIN(TestAddEndpointDialog)
#include "test_add_endpoint_dialog.moc"
