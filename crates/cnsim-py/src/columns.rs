//! The engine's per-flow and per-queue records as columns, by their serde
//! names: the tables need them column by column, and a million flows as
//! JSON objects cost seconds and gigabytes to write and parse.
//!
//! A record serializes into one value per field, in field order (flattened
//! structs included); the n-th value of every record goes to the n-th
//! column. Integers become an `int64` column, floats a `float64` one, an
//! `Option` of a number a `float64` column with NaN for `None` (as pandas
//! reads such records), strings and unit enum variants a pyarrow
//! `large_string` array, made from one buffer of their bytes and one of
//! offsets: a million flows' names as Python `str` objects took a second
//! and hundreds of megabytes, which the table only converts again.

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use std::fmt::Display;

#[derive(Debug)]
pub struct Error(String);

impl Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Error {}
impl ser::Error for Error {
    fn custom<T: Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

fn unsupported<T>(what: &str) -> Result<T, Error> {
    Err(Error(format!("no column type for {what}")))
}

enum Values {
    /// No value yet (no record, or only `None`s so far: their count).
    Empty(usize),
    Int(Vec<i64>),
    Float(Vec<f64>),
    Text(Text),
}

/// Strings in Arrow's layout: their UTF-8 bytes end to end, and where
/// each starts (one offset more than strings: the last is the end).
struct Text {
    bytes: Vec<u8>,
    offsets: Vec<i64>,
}

impl Text {
    fn new() -> Text {
        Text {
            bytes: Vec::new(),
            offsets: vec![0],
        }
    }

    fn push(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
        self.offsets.push(self.bytes.len() as i64);
    }

    /// A pyarrow `large_string` array of the strings (the buffers are
    /// handed over, not copied).
    fn into_arrow<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pa = py.import("pyarrow")?;
        let n = self.offsets.len() - 1;
        let buffer = |a: Bound<'py, PyAny>| pa.call_method1("py_buffer", (a,));
        let offsets = buffer(PyArray1::from_vec(py, self.offsets).into_any())?;
        let bytes = buffer(PyArray1::from_vec(py, self.bytes).into_any())?;
        pa.getattr("LargeStringArray")?
            .call_method1("from_buffers", (n, offsets, bytes))
    }
}

struct Column {
    name: String,
    values: Values,
}

/// Columns of records, in the order of the records' fields.
#[derive(Default)]
pub struct Columns {
    columns: Vec<Column>,
    rows: usize,
}

impl Columns {
    /// The columns of `records`, each serialized as one row.
    pub fn of<T: Serialize>(records: &[T]) -> Result<Columns, Error> {
        let mut columns = Columns::default();
        for record in records {
            record.serialize(Row {
                columns: &mut columns,
                field: 0,
                key: None,
            })?;
            columns.rows += 1;
        }
        Ok(columns)
    }

    /// Put the columns in the order of their names.
    pub fn sort_by_name(&mut self) {
        self.columns.sort_by(|a, b| a.name.cmp(&b.name));
    }

    /// Each column under its name in `out`: numpy arrays of numbers,
    /// pyarrow `large_string` arrays of text. A column that only ever held
    /// `None` is all NaN.
    pub fn into_dict(self, out: &Bound<'_, PyDict>) -> PyResult<()> {
        let py = out.py();
        for c in self.columns {
            match c.values {
                Values::Empty(n) => {
                    out.set_item(c.name, PyArray1::from_vec(py, vec![f64::NAN; n]))?
                }
                Values::Int(v) => out.set_item(c.name, PyArray1::from_vec(py, v))?,
                Values::Float(v) => out.set_item(c.name, PyArray1::from_vec(py, v))?,
                Values::Text(t) => out.set_item(c.name, t.into_arrow(py)?)?,
            }
        }
        Ok(())
    }

    /// Add `value` of field number `field`, named `key`, to the current row.
    fn push(&mut self, field: usize, key: &str, value: Value) -> Result<(), Error> {
        if field == self.columns.len() {
            if self.rows > 0 {
                return Err(Error(format!(
                    "record {} has a field '{key}' the first lacks",
                    self.rows
                )));
            }
            self.columns.push(Column {
                name: key.to_owned(),
                values: Values::Empty(0),
            });
        }
        let column = &mut self.columns[field];
        if column.name != key {
            return Err(Error(format!(
                "record {}: field {field} is '{key}', the first record's is '{}'",
                self.rows, column.name
            )));
        }
        match (&mut column.values, value) {
            (Values::Empty(n), Value::None) => *n += 1,
            (Values::Empty(n), Value::Float(x)) => {
                let mut v = vec![f64::NAN; *n];
                v.push(x);
                column.values = Values::Float(v);
            }
            (Values::Empty(0), Value::Int(x)) => column.values = Values::Int(vec![x]),
            (Values::Empty(0), Value::Text(s)) => {
                let mut t = Text::new();
                t.push(&s);
                column.values = Values::Text(t);
            }
            (Values::Int(v), Value::Int(x)) => v.push(x),
            (Values::Float(v), Value::Float(x)) => v.push(x),
            (Values::Float(v), Value::None) => v.push(f64::NAN),
            (Values::Text(t), Value::Text(s)) => t.push(&s),
            _ => {
                return Err(Error(format!(
                    "record {}: field '{key}' changes type",
                    self.rows
                )))
            }
        }
        Ok(())
    }
}

/// One field's value.
enum Value {
    Int(i64),
    Float(f64),
    Text(String),
    None,
}

/// Serializes one record: a struct, or a map when a field is flattened.
struct Row<'a> {
    columns: &'a mut Columns,
    field: usize,
    /// The key of a map entry whose value is next.
    key: Option<String>,
}

impl Row<'_> {
    fn field<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) -> Result<(), Error> {
        let value = value.serialize(Scalar { optional: false })?;
        self.columns.push(self.field, key, value)?;
        self.field += 1;
        Ok(())
    }
}

/// Serializer methods for what has no column: each an error naming it
/// (`what`: a record, or a field's value).
macro_rules! unsupported_methods {
    ($what:literal; $($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, Error> {
            unsupported(concat!($what, stringify!($method)))
        })*
    };
}

impl<'a> Serializer for Row<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, Error> {
        Ok(self)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Error> {
        unsupported("record serialize_some")
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        unsupported("record serialize_newtype_struct")
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        unsupported("record serialize_newtype_variant")
    }
    unsupported_methods! {
        "record ";
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_str(&str) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}

impl SerializeStruct for Row<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl SerializeMap for Row<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        match key.serialize(Scalar { optional: false })? {
            Value::Text(k) => {
                self.key = Some(k);
                Ok(())
            }
            _ => unsupported("non-string map key"),
        }
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| Error("a map value without its key".into()))?;
        self.field(&key, value)
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

/// Serializes one field's value; `optional` inside `Some`, where an integer
/// becomes a float (the column also holds NaN).
struct Scalar {
    optional: bool,
}

impl Scalar {
    fn int(self, x: i64) -> Result<Value, Error> {
        Ok(if self.optional {
            Value::Float(x as f64)
        } else {
            Value::Int(x)
        })
    }
}

/// Integers that fit an `int64` column as they are.
macro_rules! integers {
    ($($method:ident($t:ty);)*) => {
        $(fn $method(self, v: $t) -> Result<Value, Error> {
            self.int(v.into())
        })*
    };
}

impl Serializer for Scalar {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = Impossible<Value, Error>;
    type SerializeTuple = Impossible<Value, Error>;
    type SerializeTupleStruct = Impossible<Value, Error>;
    type SerializeTupleVariant = Impossible<Value, Error>;
    type SerializeMap = Impossible<Value, Error>;
    type SerializeStruct = Impossible<Value, Error>;
    type SerializeStructVariant = Impossible<Value, Error>;

    integers! {
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
    }
    fn serialize_u64(self, v: u64) -> Result<Value, Error> {
        let v = i64::try_from(v).map_err(|_| Error(format!("{v} does not fit an int64 column")))?;
        self.int(v)
    }
    fn serialize_f32(self, v: f32) -> Result<Value, Error> {
        Ok(Value::Float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, Error> {
        Ok(Value::Float(v))
    }
    fn serialize_str(self, v: &str) -> Result<Value, Error> {
        Ok(Value::Text(v.to_owned()))
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Value, Error> {
        Ok(Value::Text(variant.to_owned()))
    }
    fn serialize_none(self) -> Result<Value, Error> {
        Ok(Value::None)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, Error> {
        value.serialize(Scalar { optional: true })
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Value, Error> {
        unsupported("serialize_newtype_variant")
    }
    unsupported_methods! {
        "field ";
        serialize_bool(bool) -> Value;
        serialize_char(char) -> Value;
        serialize_bytes(&[u8]) -> Value;
        serialize_unit() -> Value;
        serialize_unit_struct(&'static str) -> Value;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }
}
