// Combo boxes of the engine's devices (listDevices(): the CPU, then each CUDA GPU), one row per
// device with its free memory; the item data is the device id ("cpu", "cuda:0"). The Models
// screen's fit-badge device and the run device of Compare, Suites and Performance use them.
#pragma once

#include "verdict/engine/devices.h"

class QComboBox;
class QSpinBox;
class QWidget;

namespace verdict::ui {

class Workbench;

// Replaces the rows of `box` with `devices` ("cuda:0 — NVIDIA H200 (… free of …)"); the tooltip
// says the CUDA status (e.g. why there is no GPU).
void fillDeviceCombo(QComboBox* box, const DeviceList& devices);

// A combo (object name "runDevice") for where local models run: shows and sets
// Workbench::runDevice(), and follows it when another screen changes it. Endpoints ignore it.
QComboBox* createRunDeviceCombo(Workbench& wb, QWidget* parent = nullptr);

// Its companion (object name "runGpuLayers"): Workbench::runGpuLayers(), -1..1024 with -1 shown as
// "all"; enabled only while the run device is a GPU (the CPU ignores the value).
QSpinBox* createRunGpuLayersSpin(Workbench& wb, QWidget* parent = nullptr);

}  // namespace verdict::ui
