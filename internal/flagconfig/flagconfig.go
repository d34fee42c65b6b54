package flagconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/membership"
)

// EnvPrefix starts every environment variable that sets a flag:
// SPARROW_PROBE_RATIO sets --probe-ratio.
const EnvPrefix = "SPARROW_"

// EnvConfig names the config file when --config is not given.
const EnvConfig = EnvPrefix + "CONFIG"

// envNotFlags are SPARROW_ variables that are not settings: the gossip
// keys (a secret, read only by the code that builds the keyring) and the
// ones the Makefile, compose files and test harnesses read. The shells that
// start daemons carry them, so they are neither settings nor typos.
var envNotFlags = []string{membership.GossipKeyEnv, EnvConfig, "SPARROW_NET", "SPARROW_IMAGE", "SPARROW_JVM_INTEROP"}

// envNotFlagPrefixes are families of such variables.
var envNotFlagPrefixes = []string{"SPARROW_INTEROP_", "SPARROW_E2E_"}

// flagAliases maps old flag names to the names that replaced them, so that
// a file or variable using either sets the one flag, and precedence looks
// at both.
var flagAliases = map[string]string{"metrics-listen": "http-listen"}

// Help ends the long help of every command that takes --config.
const Help = `

Every flag can also be set in a YAML or TOML file named by --config (or
$SPARROW_CONFIG), keyed by the flag's name, or in the environment as
SPARROW_ and the name in capitals with _ for - (SPARROW_LOG_LEVEL for
--log-level). The command line wins over the environment, which wins over
the file. A key in the file that is not a flag of this command is an error;
a SPARROW_ variable that is no flag of any sparrow command is logged as a
likely typo. Repeatable flags take a list in the file and comma-separated
values in the environment. Gossip keys never go in the file.`

// Config is the --config file and SPARROW_* environment of one daemon
// command, applied to its flags before it runs.
type Config struct {
	File string
	// FromFile and FromEnv name the flags each source set, and Warnings
	// are problems worth telling but not fatal; Report logs them all once
	// the logger exists (its level may come from the file).
	FromFile, FromEnv []string
	Warnings          []string
}

// Attach adds --config to a daemon command and applies the file and
// environment to its flags before RunE.
func Attach(cmd *cobra.Command) *Config {
	dc := &Config{}
	cmd.Flags().StringVar(&dc.File, "config", "", "YAML (.yaml, .yml) or TOML (.toml) file of settings keyed by flag name; the command line and SPARROW_* variables override it (default $"+EnvConfig+")")
	cmd.Long += Help
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		return dc.Apply(cmd.Flags(), os.Environ(), CommandFlagNames(cmd.Root()))
	}
	return dc
}

// CommandFlagNames lists the flags of every sparrow command, to tell a
// variable meant for another command (an environment shared by several
// daemons) from a typo.
func CommandFlagNames(root *cobra.Command) map[string]bool {
	names := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) { names[f.Name] = true }
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return names
}

// Apply sets every flag not given on the command line from the environment
// or, failing that, the file. known holds the flag names of every sparrow
// command.
func (dc *Config) Apply(fs *pflag.FlagSet, environ []string, known map[string]bool) error {
	if !fs.Changed("config") {
		for _, kv := range environ {
			if v, ok := strings.CutPrefix(kv, EnvConfig+"="); ok {
				dc.File = v
			}
		}
	}
	fileK, err := dc.loadFile(fs, known)
	if err != nil {
		return err
	}
	envK := koanf.New(".")
	err = envK.Load(env.Provider("", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, value string) (string, any) {
			key, ok := dc.envKey(fs, name, known)
			if !ok {
				return "", nil
			}
			return key, value
		},
	}), nil)
	if err != nil {
		return fmt.Errorf("environment: %w", err)
	}

	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if !settable(fs, f.Name) || f.Name != canonicalFlag(f.Name) || givenOnCommandLine(fs, f.Name) {
			return
		}
		switch {
		case envK.Exists(f.Name):
			if err := setFlag(fs, f, envK.Get(f.Name), true); err != nil {
				errs = append(errs, fmt.Errorf("$%s: %w", envVar(f.Name), err))
				return
			}
			dc.FromEnv = append(dc.FromEnv, f.Name)
		case fileK.Exists(f.Name):
			if err := setFlag(fs, f, fileK.Get(f.Name), false); err != nil {
				errs = append(errs, fmt.Errorf("config file %s, key %s: %w", dc.File, f.Name, err))
				return
			}
			dc.FromFile = append(dc.FromFile, f.Name)
		}
	})
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// loadFile parses --config, refusing keys that are not flags of this
// command.
func (dc *Config) loadFile(fs *pflag.FlagSet, known map[string]bool) (*koanf.Koanf, error) {
	k := koanf.New(".")
	if dc.File == "" {
		return k, nil
	}
	var parser koanf.Parser
	switch strings.ToLower(filepath.Ext(dc.File)) {
	case ".yaml", ".yml":
		parser = yaml.Parser()
	case ".toml":
		parser = toml.Parser()
	default:
		return nil, fmt.Errorf("config file %s: want a .yaml, .yml or .toml file", dc.File)
	}
	if err := k.Load(file.Provider(dc.File), parser); err != nil {
		return nil, fmt.Errorf("config file %s: %w", dc.File, err)
	}
	canon := koanf.New(".")
	keys := k.Keys()
	slices.Sort(keys) // report the same key first every time
	for _, key := range keys {
		name := canonicalFlag(key)
		if !settable(fs, name) {
			return nil, fmt.Errorf("config file %s: unknown key %q: %s", dc.File, key, whyUnknown(fs, key, known))
		}
		if name != key {
			dc.Warnings = append(dc.Warnings, fmt.Sprintf("config file %s: key %q is deprecated; use %q", dc.File, key, name))
		}
		if canon.Exists(name) {
			return nil, fmt.Errorf("config file %s: both %q and its old name are set; keep %q", dc.File, name, name)
		}
		canon.Set(name, k.Get(key))
	}
	return canon, nil
}

// envKey maps a SPARROW_ variable to the flag it sets, if it sets one of
// this command's flags. Variables naming no flag of any sparrow command
// are reported as likely typos; the ones naming another command's flags
// are ignored quietly, since one environment often serves several daemons.
func (dc *Config) envKey(fs *pflag.FlagSet, name string, known map[string]bool) (string, bool) {
	if slices.Contains(envNotFlags, name) || slices.ContainsFunc(envNotFlagPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
		return "", false
	}
	raw := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, EnvPrefix), "_", "-"))
	key := canonicalFlag(raw)
	switch {
	case settable(fs, key):
		if key != raw {
			dc.Warnings = append(dc.Warnings, fmt.Sprintf("$%s is deprecated; use $%s", name, envVar(key)))
		}
		return key, true
	case !known[raw]:
		dc.Warnings = append(dc.Warnings, fmt.Sprintf("$%s names no flag of any sparrow command; ignored (a typo?)", name))
	}
	return "", false
}

// Report logs what the configuration did.
func (dc *Config) Report(log zerolog.Logger) {
	for _, w := range dc.Warnings {
		log.Warn().Msg(w)
	}
	if len(dc.FromFile) > 0 || len(dc.FromEnv) > 0 {
		log.Info().Str("file", dc.File).Strs("from_file", dc.FromFile).Strs("from_env", dc.FromEnv).Msg("settings from the config file and environment")
	}
}

// settable reports whether name is a flag a file or variable may set: any
// of the command's flags but --help and --config itself.
func settable(fs *pflag.FlagSet, name string) bool {
	return name != "help" && name != "config" && fs.Lookup(name) != nil
}

// canonicalFlag returns the current name of a flag that was renamed.
func canonicalFlag(name string) string {
	if n, ok := flagAliases[name]; ok {
		return n
	}
	return name
}

// givenOnCommandLine reports whether the flag, under its name or an old
// one, was on the command line.
func givenOnCommandLine(fs *pflag.FlagSet, name string) bool {
	if fs.Changed(name) {
		return true
	}
	for old, cur := range flagAliases {
		if cur == name && fs.Lookup(old) != nil && fs.Changed(old) {
			return true
		}
	}
	return false
}

func envVar(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// whyUnknown explains an unknown key, pointing at the likeliest mistake.
func whyUnknown(fs *pflag.FlagSet, key string, known map[string]bool) string {
	switch {
	case key == "config":
		return "a config file cannot name another"
	case strings.HasPrefix(key, "gossip-key") && key != "gossip-key-file":
		return "gossip keys do not belong in config files; use --gossip-key-file or $" + membership.GossipKeyEnv
	case strings.Contains(key, "."):
		return "settings are flat, one key per flag; repeatable flags take a list (attr: [rack=r1])"
	case known[key]:
		return "a flag of another sparrow command, not of this one"
	}
	return "not a flag of this command (see --help)"
}

// setFlag sets f from a file or environment value. A list sets a
// repeatable flag's values, or joins with commas for a flag that takes
// comma-separated values (join); a variable's value is split on commas
// for a repeatable flag.
func setFlag(fs *pflag.FlagSet, f *pflag.Flag, v any, fromEnv bool) error {
	var items []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			s, err := scalar(e)
			if err != nil {
				return err
			}
			items = append(items, s)
		}
	case string:
		if _, isSlice := f.Value.(pflag.SliceValue); fromEnv && isSlice {
			items = strings.Split(x, ",")
		} else {
			items = []string{x}
		}
	default:
		s, err := scalar(x)
		if err != nil {
			return err
		}
		items = []string{s}
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		if err := sv.Replace(items); err != nil {
			return err
		}
		f.Changed = true
		return nil
	}
	return fs.Set(f.Name, strings.Join(items, ","))
}

// scalar formats one parsed YAML or TOML value as the flag parser reads
// it.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		// 'f' rather than %v: 1e+06 would not parse as an integer flag.
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("unsupported value %v (%T)", v, v)
}
