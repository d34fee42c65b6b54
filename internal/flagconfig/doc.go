// Package flagconfig layers a daemon command's settings: its flags, then
// SPARROW_* environment variables, then a YAML or TOML file named by
// --config or $SPARROW_CONFIG, each key a flag's name. It refuses file keys
// that are no flag of the command, and reports variables that name no
// flag of any sparrow command as likely typos.
package flagconfig
