using System.Globalization;
using Jackdaw.Server.Indexing.Mapping;
using Jint;
using Jint.Native;
using Jint.Native.Json;
using Jint.Native.Object;
using Jint.Runtime;
using Jint.Runtime.Descriptors;

namespace Jackdaw.Server.Indexing.JavaScript;

/// <summary>
/// Turns what a map function returned into index entries (<see cref="IndexField"/> values as
/// <see cref="IndexField"/> documents them). It runs inside the map's sandbox: a getter or a
/// <c>toJSON</c> it triggers is script code under the same limits.
/// </summary>
/// <remarks>
/// Values: undefined (and functions, symbols) leave the field out, null is null, booleans and strings
/// are themselves, a number is a <see cref="long"/> when it is an integer within range and not -0,
/// else a <see cref="double"/>; NaN and the infinities become null (a field the map meant to write
/// but could not compute: present, with no value to range over). A Date is its ISO-8601 UTC text
/// (<c>"o"</c>), an invalid Date null; an array is a list of its converted items with nested arrays
/// flattened into it; any other object is an <see cref="IndexJson"/> of its compact JSON.
/// </remarks>
internal sealed class IndexEntryConverter
{
    // A self-containing array would otherwise recurse until the process dies.
    private const int MaxArrayNesting = 32;

    private readonly JsonSerializer _json;
    private readonly int _maxArrayLength;
    private readonly List<IndexField> _fields = new();

    public IndexEntryConverter(Engine engine, int maxArrayLength)
    {
        _json = new JsonSerializer(engine);
        _maxArrayLength = maxArrayLength;
    }

    /// <summary>Appends the entries of one map function's <paramref name="result"/>: an object is one, an array one per object, null none.</summary>
    /// <param name="mapName">Names the map in errors (<c>Maps[0] (Orders)</c>).</param>
    public void AddEntries(JsValue result, List<IndexField[]> entries, string mapName)
    {
        if (result.IsNull() || result.IsUndefined())
        {
            return;
        }

        if (result is not ObjectInstance obj || result.IsCallable())
        {
            throw new IndexMapException($"{mapName} returned {MapScope.Describe(result)}; a map returns an object, an array of objects, or null.");
        }

        if (!obj.IsArray())
        {
            entries.Add(ToEntry(obj));
            return;
        }

        var length = LengthOf(obj);
        for (var i = 0u; i < length; i++)
        {
            var item = obj.Get(i);
            if (item.IsNull() || item.IsUndefined())
            {
                continue;
            }

            if (item is not ObjectInstance entry || item.IsArray() || item.IsCallable())
            {
                throw new IndexMapException($"{mapName} returned an array holding {MapScope.Describe(item)} at index {i}; the items of a fan-out are objects.");
            }

            entries.Add(ToEntry(entry));
        }
    }

    private IndexField[] ToEntry(ObjectInstance obj)
    {
        _fields.Clear();
        foreach (var key in obj.GetOwnPropertyKeys(Types.String))
        {
            var descriptor = obj.GetOwnProperty(key);
            if (descriptor == PropertyDescriptor.Undefined || !descriptor.Enumerable)
            {
                continue;
            }

            var value = descriptor.IsDataDescriptor() ? descriptor.Value : obj.Get(key);
            if (TryConvert(value, out var converted, 0))
            {
                _fields.Add(new IndexField(key.ToString(), converted));
            }
        }

        return _fields.ToArray();
    }

    /// <summary>False when the value leaves the field (or array item) out.</summary>
    private bool TryConvert(JsValue value, out object? converted, int nesting)
    {
        converted = null;
        switch (value.Type)
        {
            case Types.Undefined:
            case Types.Symbol:
                return false;
            case Types.Null:
                return true;
            case Types.Boolean:
                converted = value.AsBoolean();
                return true;
            case Types.Number:
                converted = FromNumber(value.AsNumber());
                return true;
            case Types.String:
                converted = value.AsString();
                return true;
            case Types.BigInt:
                var text = TypeConverter.ToString(value);
                converted = long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var integer) ? integer : text;
                return true;
        }

        if (value.IsCallable())
        {
            return false;
        }

        if (value is JsDate date)
        {
            converted = double.IsNaN(date.DateValue) ? null : date.ToDateTime().ToUniversalTime().ToString("o", CultureInfo.InvariantCulture);
            return true;
        }

        var obj = (ObjectInstance)value;
        if (obj.IsArray())
        {
            var items = new List<object?>();
            AddItems(obj, items, nesting);
            converted = items;
            return true;
        }

        var json = _json.Serialize(value);
        if (!json.IsString())
        {
            return false;
        }

        converted = new IndexJson(json.AsString());
        return true;
    }

    private void AddItems(ObjectInstance array, List<object?> items, int nesting)
    {
        if (nesting >= MaxArrayNesting)
        {
            throw new IndexMapException($"The map returned arrays nested more than {MaxArrayNesting} deep (an array that holds itself?).");
        }

        var length = LengthOf(array);
        for (var i = 0u; i < length; i++)
        {
            var item = array.Get(i);
            if (item.IsArray())
            {
                AddItems((ObjectInstance)item, items, nesting + 1);
            }
            else if (TryConvert(item, out var converted, nesting))
            {
                items.Add(converted);
            }
        }
    }

    /// <summary>The length of an array, refused past the limit: a sparse <c>a.length = 4e9</c> costs nothing to make and would loop here, outside the sandbox.</summary>
    private uint LengthOf(ObjectInstance array)
    {
        var length = array is JsArray jsArray ? jsArray.Length : TypeConverter.ToLength(array.Get("length"));
        if (length > (ulong)_maxArrayLength)
        {
            throw new IndexMapException($"The map returned an array of {length} items; the limit is {_maxArrayLength}.");
        }

        return (uint)length;
    }

    /// <summary>An integer within long range (and not -0) as a long, else the double; NaN and infinities as null.</summary>
    internal static object? FromNumber(double number)
    {
        if (!double.IsFinite(number))
        {
            return null;
        }

        // 2^63 is exact in a double; every integral double in [-2^63, 2^63) converts exactly.
        if (number == Math.Truncate(number) && number >= -9223372036854775808.0 && number < 9223372036854775808.0
            && !(number == 0 && double.IsNegative(number)))
        {
            return (long)number;
        }

        return number;
    }
}
