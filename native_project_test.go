package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProjectAppIDs: the app ids are read from the project's files, each
// with the file that names it: a Groovy build.gradle's applicationId (not
// a commented one, not applicationIdSuffix, before the namespace), the
// Xcode project's bundle id (not a test target's, not one built from
// variables), a Kotlin build.gradle.kts's namespace, app.json's Expo ids,
// app.config.ts's literal ones.
func TestProjectAppIDs(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs(filepath.Join("testdata", "native", "projects"))
	for _, tc := range []struct {
		dir  string
		want []nativeAppSource
	}{
		{"rn-app", []nativeAppSource{{"com.example.shop", "android/app/build.gradle"}, {"com.example.shop.ios", "ios/Shop.xcodeproj/project.pbxproj"}}},
		{"kts-app", []nativeAppSource{{"com.example.kts", "android/app/build.gradle.kts"}}},
		{"expo-app", []nativeAppSource{{"com.example.expo.shop.android", "app.json"}, {"com.example.expo.shop", "app.json"}}},
		{"expo-config", []nativeAppSource{{"com.example.config.shop", "app.config.ts"}}},
		{"none", nil},
	} {
		dir := filepath.Join(root, tc.dir)
		var want []nativeAppSource
		for _, w := range tc.want {
			want = append(want, nativeAppSource{ID: w.ID, From: filepath.Join(dir, filepath.FromSlash(w.From))})
		}
		var p projectAppIDs
		if diff := cmp.Diff(want, p.read(dir)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.dir, diff)
		}
	}
}

// TestProjectAppIDsBoundedAndFresh: a huge build file is read only up to
// maxProjectFileBytes (an id past it is not seen); an edit of the file is
// read at the next look; the working directory is the project when none
// is set.
func TestProjectAppIDsBoundedAndFresh(t *testing.T) {
	dir := t.TempDir()
	gradle := filepath.Join(dir, "android", "app", "build.gradle")
	if err := os.MkdirAll(filepath.Dir(gradle), 0o755); err != nil {
		t.Fatal(err)
	}
	pad := "// " + strings.Repeat("x", 100) + "\n"
	huge := strings.Repeat(pad, maxProjectFileBytes/len(pad)+1) + `applicationId "com.example.far"` + "\n"
	if err := os.WriteFile(gradle, []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	var p projectAppIDs
	if got := p.read(dir); len(got) != 0 {
		t.Errorf("an id past the bound was read: %v", got)
	}
	if err := os.WriteFile(gradle, []byte(`applicationId "com.example.near"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := p.read(dir); len(got) != 1 || got[0].ID != "com.example.near" {
		t.Errorf("the edited file was not read again: %v", got)
	}
	t.Chdir(dir)
	if got := p.read(""); len(got) != 1 || got[0].From != gradle {
		t.Errorf("the working directory's project: %v", got)
	}
}

// TestFollowedAppSources: the apps followed are NATIVE_APPS, the
// project's, then the sessions', each once with where it came first from.
func TestFollowedAppSources(t *testing.T) {
	t.Parallel()
	var p projectAppIDs
	ids := p.keep([]nativeAppSource{{"com.a", appFromSetting}, {"com.b", "/p/app.json"}, {"com.a", "/p/app.json"}, {"bad id", appFromSession}, {"com.c", appFromSession}})
	want := []nativeAppSource{{"com.a", appFromSetting}, {"com.b", "/p/app.json"}, {"com.c", appFromSession}}
	if diff := cmp.Diff(want, p.followed()); diff != "" || strings.Join(ids, ",") != "com.a,com.b,com.c" {
		t.Errorf("ids %v; sources (-want +got):\n%s", ids, diff)
	}
}

func projectSeeds(f *testing.F, rel string) {
	f.Helper()
	matches, _ := filepath.Glob(filepath.Join("testdata", "native", "projects", "*", filepath.FromSlash(rel)))
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("")
}

// checkReadIDs fails unless each id read is written in text.
func checkReadIDs(t *testing.T, text string, ids []string) {
	t.Helper()
	for _, id := range ids {
		if !strings.Contains(text, id) || strings.Contains(id, "\n") {
			t.Fatalf("%q read from %q", id, text)
		}
	}
}

// FuzzParseGradleAppID: an id read is written quoted in the file; one
// written as `applicationId "…"` or `applicationId = "…"` reads back.
func FuzzParseGradleAppID(f *testing.F) {
	projectSeeds(f, "android/app/build.gradle")
	projectSeeds(f, "android/app/build.gradle.kts")
	f.Fuzz(func(t *testing.T, text string) {
		ids := parseGradleAppID(text)
		checkReadIDs(t, text, ids)
		if len(ids) > 1 {
			t.Fatalf("%v", ids)
		}
		for _, form := range []string{"applicationId \"com.example.x\"", "applicationId = \"com.example.x\""} {
			if got := parseGradleAppID(form + "\n" + text); len(got) != 1 || got[0] != "com.example.x" {
				t.Fatalf("%q read as %v", form, got)
			}
		}
	})
}

// FuzzParseExpoConfigScript: ids read are written quoted in the script.
func FuzzParseExpoConfigScript(f *testing.F) {
	projectSeeds(f, "app.config.ts")
	f.Fuzz(func(t *testing.T, text string) {
		checkReadIDs(t, text, parseExpoConfigScript(text))
		if got := parseExpoConfigScript("{ios: {bundleIdentifier: 'com.example.x'}}\n" + text); len(got) == 0 || got[len(got)-1] != "com.example.x" {
			t.Fatalf("read as %v", got)
		}
	})
}

// FuzzParseExpoAppJSON: ids read are in the JSON (escapes aside, which no
// valid id needs), at most two.
func FuzzParseExpoAppJSON(f *testing.F) {
	projectSeeds(f, "app.json")
	f.Fuzz(func(t *testing.T, text string) {
		ids := parseExpoAppJSON(text)
		if len(ids) > 2 {
			t.Fatalf("%v", ids)
		}
		for _, id := range ids {
			if validNativeAppID(id) && !strings.Contains(text, id) {
				t.Fatalf("%q read from %q", id, text)
			}
		}
	})
}

// FuzzParsePBXBundleIDs: ids read are written in the project, never built
// from variables.
func FuzzParsePBXBundleIDs(f *testing.F) {
	projectSeeds(f, "ios/*.xcodeproj/project.pbxproj")
	f.Fuzz(func(t *testing.T, text string) {
		ids := parsePBXBundleIDs(text)
		checkReadIDs(t, text, ids)
		for _, id := range ids {
			if strings.Contains(id, "$") {
				t.Fatalf("%q read from %q", id, text)
			}
		}
	})
}
