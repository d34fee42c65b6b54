package client

import (
	"crypto/tls"
	"reflect"
	"testing"
)

// Every RPCConfig field reaches the transport's field of the same name:
// a field added to one and not mapped fails here.
func TestRPCConfigMapsEveryField(t *testing.T) {
	var c RPCConfig
	cv := reflect.ValueOf(&c).Elem()
	for i := range cv.NumField() {
		f := cv.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Pointer:
			f.Set(reflect.ValueOf(&tls.Config{ServerName: "x"}))
		default:
			t.Fatalf("field %s: kind %v not covered by this test", cv.Type().Field(i).Name, f.Kind())
		}
	}
	iv := reflect.ValueOf(c.internal())
	for i := range cv.NumField() {
		name := cv.Type().Field(i).Name
		got := iv.FieldByName(name)
		if !got.IsValid() {
			t.Errorf("transport config has no field %s", name)
			continue
		}
		if !reflect.DeepEqual(got.Interface(), cv.Field(i).Interface()) {
			t.Errorf("%s: %v reached the transport as %v", name, cv.Field(i).Interface(), got.Interface())
		}
	}
}
