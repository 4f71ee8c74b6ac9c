// Two combo boxes choosing the runs the Cost and Decision screens compare, bound to the
// Workbench's compared runs (so every screen shows the same pair).
#pragma once

#include <QWidget>

class QComboBox;

namespace verdict::ui {

class Workbench;

class RunPairPicker : public QWidget {
    Q_OBJECT
public:
    explicit RunPairPicker(Workbench& workbench, QWidget* parent = nullptr);
    void reload();

private:
    Workbench& m_wb;
    QComboBox* m_a;
    QComboBox* m_b;
};

}  // namespace verdict::ui
