// Package ghaction tests the GitHub Action (action.yml at the repository root)
// locally: its shell steps run with the environment an Actions runner gives
// them (GITHUB_ACTION_PATH, GITHUB_WORKSPACE, GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY, RUNNER_TEMP, INPUT_*), and action.yml is checked for
// inputs interpolated into shell code.
package ghaction
