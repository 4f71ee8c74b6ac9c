#include "widgets/device_combo.h"

#include "core/models/model_fit.h"
#include "workbench.h"

#include <QComboBox>
#include <QSpinBox>
#include <QStringList>

namespace verdict::ui {

void fillDeviceCombo(QComboBox* box, const DeviceList& devices) {
    box->clear();
    for (const DeviceInfo& d : devices.devices) {
        box->addItem(QComboBox::tr("%1 — %2 (%3 free of %4)")
                         .arg(QString::fromStdString(d.id), QString::fromStdString(d.name),
                              QString::fromStdString(core::formatDecimalBytes(d.freeBytes)),
                              QString::fromStdString(core::formatDecimalBytes(d.totalBytes))),
                     QString::fromStdString(d.id));
        // The CPU's kernels as `verdict devices` reports them: SIMD level, extensions, AMX and why.
        if (d.kind == "cpu") {
            QStringList features;
            for (const auto& f : d.cpuFeatures) features << QString::fromStdString(f);
            box->setItemData(box->count() - 1,
                             QComboBox::tr("Kernels: %1 (%2)\nAMX: %3 — %4")
                                 .arg(QString::fromStdString(d.simd), features.join(' '),
                                      QString::fromStdString(d.amx), QString::fromStdString(d.amxDetail)),
                             Qt::ToolTipRole);
        }
    }
    if (!devices.cudaStatus.empty())
        box->setToolTip(QComboBox::tr("CUDA: %1").arg(QString::fromStdString(devices.cudaStatus)));
}

QComboBox* createRunDeviceCombo(Workbench& wb, QWidget* parent) {
    auto* box = new QComboBox(parent);
    box->setObjectName("runDevice");
    fillDeviceCombo(box, listDevices());
    box->setToolTip(QComboBox::tr("Where local models run (endpoints ignore it). %1").arg(box->toolTip()));
    auto show = [box, &wb] {
        const int i = box->findData(wb.runDevice());
        box->setCurrentIndex(i >= 0 ? i : 0);
        // A device saved in an earlier session that is gone now (no GPU): back to the CPU.
        if (i < 0) wb.setRunDevice(box->itemData(0).toString());
    };
    show();
    QObject::connect(box, &QComboBox::activated, box, [box, &wb] { wb.setRunDevice(box->currentData().toString()); });
    QObject::connect(&wb, &Workbench::runDeviceChanged, box, show);
    return box;
}

QSpinBox* createRunGpuLayersSpin(Workbench& wb, QWidget* parent) {
    auto* spin = new QSpinBox(parent);
    spin->setObjectName("runGpuLayers");
    spin->setRange(-1, 1024);
    spin->setSpecialValueText(QSpinBox::tr("all"));  // shown at the minimum, -1
    spin->setToolTip(QSpinBox::tr("GPU layers: the first N transformer blocks run on the GPU, the rest and the "
                                  "output head on the CPU (partial offload); all = every block"));
    auto show = [spin, &wb] {
        spin->setValue(wb.runGpuLayers());
        spin->setEnabled(wb.runDevice() != "cpu");
    };
    show();
    QObject::connect(spin, &QSpinBox::valueChanged, spin, [&wb](int n) { wb.setRunGpuLayers(n); });
    QObject::connect(&wb, &Workbench::runGpuLayersChanged, spin, show);
    QObject::connect(&wb, &Workbench::runDeviceChanged, spin, show);
    return spin;
}

}  // namespace verdict::ui
