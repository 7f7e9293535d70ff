plugins {
    id("com.android.application")
    id("org.jetbrains.kotlin.android")
}

android {
    namespace = "com.example.kts"
    defaultConfig {
        minSdk = 24
    }
}
