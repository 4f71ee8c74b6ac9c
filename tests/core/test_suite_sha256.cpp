// SHA-256 against the FIPS 180-4 / NIST CSRC example vectors, streamed in odd chunk sizes, and
// the SHA-NI path against the portable one on the same data.
#include "util/sha256.h"

#include <QtTest/QtTest>

#include <random>
#include <string>

using verdict::util::Sha256;
using verdict::util::sha256Hex;

class TestSuiteSha256 : public QObject {
    Q_OBJECT
private slots:
    void fipsVectors_data() {
        QTest::addColumn<QByteArray>("message");
        QTest::addColumn<QString>("digest");
        // NIST "Examples with Intermediate Values": SHA256 one block, two blocks, and the empty message.
        QTest::addRow("abc") << QByteArray("abc")
                             << "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        QTest::addRow("empty") << QByteArray("")
                               << "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        QTest::addRow("448 bits") << QByteArray("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                                  << "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
        QTest::addRow("896 bits")
            << QByteArray("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")
            << "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1";
        QTest::addRow("one million a") << QByteArray(1000000, 'a')
                                       << "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
        // Padding edges: 55 bytes fits one block, 56 needs two.
        QTest::addRow("55 a") << QByteArray(55, 'a') << "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318";
        QTest::addRow("56 a") << QByteArray(56, 'a') << "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a";
        QTest::addRow("64 a") << QByteArray(64, 'a') << "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb";
    }
    void fipsVectors() {
        QFETCH(QByteArray, message);
        QFETCH(QString, digest);
        const std::string msg(message.constData(), size_t(message.size()));
        QCOMPARE(QString::fromStdString(sha256Hex(msg)), digest);
        // Same digest when streamed in chunks of every awkward size, on both code paths.
        for (bool scalar : {false, true}) {
            for (size_t chunk : {size_t(1), size_t(3), size_t(63), size_t(64), size_t(65), size_t(1000)}) {
                Sha256 h;
                h.setForceScalar(scalar);
                for (size_t off = 0; off < msg.size(); off += chunk) h.update(msg.data() + off, std::min(chunk, msg.size() - off));
                QCOMPARE(QString::fromStdString(h.finalHex()), digest);
            }
        }
    }

    void resetAfterFinal() {
        Sha256 h;
        h.update("abc");
        const std::string first = h.finalHex();
        h.update("abc");
        QCOMPARE(h.finalHex(), first);
    }

    void accelerationMatchesPortable() {
        std::mt19937 rng(7);
        for (int len = 0; len < 3000; len += 37) {
            std::string data(size_t(len), '\0');
            for (char& c : data) c = char(rng());
            Sha256 fast, slow;
            slow.setForceScalar(true);
            fast.update(data);
            slow.update(data);
            QCOMPARE(fast.finalHex(), slow.finalHex());
        }
        qInfo("SHA extensions in use: %s", Sha256::usesShaExtensions() ? "yes" : "no");
    }
};

QTEST_GUILESS_MAIN(TestSuiteSha256)
#include "test_suite_sha256.moc"
