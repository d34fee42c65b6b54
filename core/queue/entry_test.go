package queue

import (
	"reflect"
	"testing"
)

// A ring entry keeps every field of the reservation it was packed from: a
// field added to Reservation and forgotten in entry or shape fails here,
// instead of being dropped on the way through a queue.
func TestEntryKeepsEveryReservationField(t *testing.T) {
	var r Reservation
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name + "-value")
		case reflect.Int32, reflect.Int64, reflect.Int:
			f.SetInt(int64(i + 7))
		case reflect.Uint64, reflect.Uint32:
			f.SetUint(uint64(i + 11))
		default:
			t.Fatalf("Reservation.%s is a %s: teach this test to fill it", v.Type().Field(i).Name, f.Kind())
		}
	}
	var tab shapeTable
	e := tab.pack(&r)
	if got := tab.unpack(&e); got != r {
		t.Fatalf("packed and unpacked %+v, got %+v", r, got)
	}
}
